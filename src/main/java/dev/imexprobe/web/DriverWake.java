package dev.imexprobe.web;

import dev.imexprobe.probe.DriverExecutor;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

import java.io.IOException;

/**
 * First of all filters on {@code /probe} and {@code /v1/imports}: tells the driver pool that this request will
 * submit driver work (the create of a push, the importer's stages) about as long after as the last ones of its
 * path did, so that a worker wakes while the request is still in the filters, reading and checking its body,
 * instead of after it submits. A hint only: no request is changed.
 */
final class DriverWake implements Filter {

    private final DriverExecutor executor;

    DriverWake(DriverExecutor executor) {
        this.executor = executor;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        executor.announce(request instanceof HttpServletRequest h ? h.getRequestURI() : "");
        try {
            chain.doFilter(request, response);
        } finally {
            executor.announced();
        }
    }
}
