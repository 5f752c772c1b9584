package dev.imexprobe.web;

import dev.imexprobe.mesh.ProbeRecorder;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

import java.io.IOException;

/**
 * /probe answers before its results are recorded ({@link ProbeRecorder#recordAfter}); every other request first
 * waits until they are ({@link ProbeRecorder#drain}, free when nothing is pending), so that /v1/mesh, the
 * metrics, health and the dashboard read right after a /probe include it. The probe's own two requests do not
 * wait: neither reads what is recorded.
 */
final class RecordedFirst implements Filter {

    private final ProbeRecorder recorder;

    RecordedFirst(ProbeRecorder recorder) {
        this.recorder = recorder;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String uri = request instanceof HttpServletRequest h ? h.getRequestURI() : null;
        if (!DirectRoutes.PROBE.equals(uri) && !DirectRoutes.IMPORTS.equals(uri)) {
            recorder.drain();
        }
        chain.doFilter(request, response);
    }
}
