package dev.imexprobe.web;

import dev.imexprobe.trace.Timeline;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.ObservationPredicate;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

import org.springframework.http.server.observation.DefaultServerRequestObservationConvention;
import org.springframework.http.server.observation.ServerRequestObservationContext;
import org.springframework.http.server.observation.ServerRequestObservationConvention;
import org.springframework.web.servlet.HandlerMapping;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * Times {@code GET /probe} and {@code POST /v1/imports} into {@code http.server.requests} with the name and tags
 * Spring's observation gives every other route (its own convention computes them, and the error tag as its meter
 * handler adds it), without the observation itself: on the H200 creating, scoping and stopping it took 7–8 % of
 * each agent's request-thread CPU per probe (docs/performance.md, "Session 2026-12-04 d"), and a probe makes two such
 * requests. The observation is off for exactly the requests timed here ({@link #observedElsewhere}); its
 * {@code http.server.requests.active} long-task timer is then not kept for them.
 */
final class RouteTimer implements Filter {

    /** Set on a request timed here; the observation predicate reads it. */
    static final String TIMED = RouteTimer.class.getName() + ".timed";
    /** When Tomcat began parsing the request (System.nanoTime()), set by {@link ParseStart}. */
    static final String PARSED = RouteTimer.class.getName() + ".parsed";
    /** The route's pattern, set by whoever answers it outside MVC (MVC leaves its own attribute). */
    static final String PATTERN = RouteTimer.class.getName() + ".pattern";

    private static final String NAME = "http.server.requests";

    private final MeterRegistry registry;
    private final ServerRequestObservationConvention convention = new DefaultServerRequestObservationConvention(NAME);
    /** One timer per tag set: a probe's request finds its timer without building or registering a meter. */
    private final ConcurrentMap<KeyValues, Timer> timers = new ConcurrentHashMap<>();

    RouteTimer(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The observation filter's requests minus those timed here. */
    static ObservationPredicate observedElsewhere() {
        return (name, context) -> !(context instanceof ServerRequestObservationContext c
                && c.getCarrier().getAttribute(TIMED) != null);
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
            chain.doFilter(req, res);
            return;
        }
        request.setAttribute(TIMED, Boolean.TRUE);
        long start = registry.config().clock().monotonicTime();
        Throwable error = null;
        try {
            chain.doFilter(request, response);
        } catch (IOException | ServletException | RuntimeException | Error e) {
            error = e instanceof ServletException s && s.getCause() != null ? s.getCause() : e;
            response.setStatus(HttpServletResponse.SC_INTERNAL_SERVER_ERROR); // as the observation filter does
            throw e;
        } finally {
            if (error == null && request.getAttribute(RequestDispatcher.ERROR_EXCEPTION) instanceof Throwable t) {
                error = t;
            }
            long end = registry.config().clock().monotonicTime();
            timer(request, response, error).record(end - start, TimeUnit.NANOSECONDS);
            if (Timeline.requests()) {
                Timeline.request(request.getMethod() + " " + request.getRequestURI(), response.getStatus(),
                        request.getAttribute(PARSED) instanceof Long p ? p : 0, start, end);
            }
        }
    }

    /**
     * Engine valve: hands Tomcat's own start of the request (its worker read the first byte) to the filters as
     * {@link #PARSED}, for {@link Timeline#request}: the time before it is the network and Tomcat's hand-off.
     */
    static final class ParseStart extends ValveBase {
        ParseStart() {
            super(true);
        }

        @Override
        public void invoke(Request request, Response response) throws IOException, ServletException {
            if (Timeline.requests()) {
                request.setAttribute(PARSED, request.getCoyoteRequest().getStartTimeNanos());
            }
            getNext().invoke(request, response);
        }
    }

    private Timer timer(HttpServletRequest request, HttpServletResponse response, Throwable error) {
        ServerRequestObservationContext context = new ServerRequestObservationContext(request, response);
        Object pattern = request.getAttribute(PATTERN);
        if (pattern == null) {
            pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        }
        context.setPathPattern(pattern instanceof String p ? p : null);
        context.setError(error);
        KeyValues keys = convention.getLowCardinalityKeyValues(context)
                .and("error", error == null ? "none" : error.getClass().getSimpleName());
        return timers.computeIfAbsent(keys, k -> {
            List<Tag> tags = new ArrayList<>();
            for (KeyValue kv : k) {
                tags.add(Tag.of(kv.getKey(), kv.getValue()));
            }
            return Timer.builder(NAME).tags(tags).register(registry);
        });
    }
}
