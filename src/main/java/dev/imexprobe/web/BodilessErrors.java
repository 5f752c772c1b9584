package dev.imexprobe.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import org.springframework.http.HttpStatusCode;
import org.springframework.web.filter.OncePerRequestFilter;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * Actuator answers an unknown health component or group (/actuator/health/nope) with a bare 404: no body, no
 * type. This filter gives such an answer the problem+json body every other error of the agent has. It only
 * touches responses that are errors, were never written to and never sent through sendError (the container's
 * error page answers those); everything else passes untouched.
 */
public class BodilessErrors extends OncePerRequestFilter {

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Watched watched = new Watched(response);
        chain.doFilter(request, watched);
        int status = watched.getStatus();
        if (status < 400 || watched.touched || response.isCommitted()) {
            watched.flushIfDeferred();
            return;
        }
        HttpStatusCode code = HttpStatusCode.valueOf(status);
        ProblemJson.write(response, ProblemJson.problem(code, ProblemJson.code(code),
                ProblemJson.reason(status) + ": " + request.getRequestURI()));
    }

    /** Notes whether anything wrote to the response, and holds back a flush that would commit an empty error. */
    private static final class Watched extends HttpServletResponseWrapper {
        boolean touched;
        boolean flushDeferred;

        Watched(HttpServletResponse response) {
            super(response);
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            touched = true;
            return super.getOutputStream();
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            touched = true;
            return super.getWriter();
        }

        @Override
        public void sendError(int sc, String msg) throws IOException {
            touched = true;
            super.sendError(sc, msg);
        }

        @Override
        public void sendError(int sc) throws IOException {
            touched = true;
            super.sendError(sc);
        }

        @Override
        public void flushBuffer() throws IOException {
            if (!touched && getStatus() >= 400) {
                flushDeferred = true; // an empty error: the filter may still give it a body
                return;
            }
            super.flushBuffer();
        }

        void flushIfDeferred() throws IOException {
            if (flushDeferred && !isCommitted()) {
                super.flushBuffer();
            }
        }
    }
}
