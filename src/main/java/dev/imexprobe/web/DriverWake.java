package dev.imexprobe.web;

import dev.imexprobe.probe.DriverExecutor;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;

import java.io.IOException;

/**
 * First of all filters on {@code /probe} and {@code /v1/imports}: tells the driver pool that work comes within
 * the next {@code 2 × imexprobe.driver.spin}, so that a worker wakes while this request is still in the filters,
 * reading and checking its body, instead of after it submits (the create of a push, the importer's stages).
 * A hint only (a pull's first driver work comes later, after its own round trip): no request is changed.
 */
final class DriverWake implements Filter {

    private final DriverExecutor executor;

    DriverWake(DriverExecutor executor) {
        this.executor = executor;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        executor.expect(executor.spinNanos());
        chain.doFilter(request, response);
    }
}
