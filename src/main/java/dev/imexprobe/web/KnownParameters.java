package dev.imexprobe.web;

import dev.imexprobe.api.Wire;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodParameter;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An operator's GET route takes the query parameters its handler names with {@code @RequestParam}, and no other:
 * Spring would ignore a misspelt one ({@code /probe?writeBack=false}, {@code /v1/node?refesh=true}) and answer with
 * the default, a probe the caller did not ask for. The route refuses it (400, before any peer or GPU is asked), names
 * the parameters it takes and, for a name that differs only in case, the one meant. Only our own GET routes: the
 * agents' POSTs to each other stay lenient, so that agents of two versions keep talking during a rolling upgrade,
 * and the actuator's endpoints keep their own rules.
 */
final class KnownParameters implements HandlerInterceptor {

    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

    private final Map<Method, List<String>> known = new ConcurrentHashMap<>();

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (handler instanceof HandlerMethod m && "GET".equals(request.getMethod())
                && m.getBeanType().getPackageName().startsWith("dev.imexprobe.")) {
            check(request, known.computeIfAbsent(m.getMethod(), KnownParameters::names));
        }
        return true;
    }

    /** The handler's {@code @RequestParam} names, in its order (as the error lists them). */
    static List<String> names(Method method) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < method.getParameterCount(); i++) {
            MethodParameter p = new MethodParameter(method, i);
            RequestParam a = p.getParameterAnnotation(RequestParam.class);
            if (a == null) {
                continue;
            }
            p.initParameterNameDiscovery(NAMES);
            names.add(!a.name().isEmpty() ? a.name() : !a.value().isEmpty() ? a.value() : p.getParameterName());
        }
        return List.copyOf(names);
    }

    /**
     * Refuses the first query parameter {@code known} does not hold; reading the names decodes the query, so an
     * undecodable one is thrown here as at any other first read ({@link Problems#undecodableQuery}).
     */
    static void check(HttpServletRequest request, List<String> known) {
        for (String name : Collections.list(request.getParameterNames())) {
            if (known.contains(name)) {
                continue;
            }
            String meant = known.stream().filter(k -> k.equalsIgnoreCase(name)).findFirst()
                    .map(k -> " (names are case-sensitive: did you mean '" + k + "'?)").orElse("");
            String takes = known.isEmpty() ? " takes no query parameters"
                    : " takes " + String.join(", ", known);
            throw ApiException.invalid("unknown query parameter '" + Wire.truncate(name) + "'" + meant + "; "
                    + AgentAuthFilter.dispatchPath(request) + takes + ". Nothing was run.");
        }
    }
}
