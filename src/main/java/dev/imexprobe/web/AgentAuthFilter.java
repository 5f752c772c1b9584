package dev.imexprobe.web;

import dev.imexprobe.api.Wire;
import dev.imexprobe.peer.AgentSignature;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.filter.ServerHttpObservationFilter;

import java.io.ByteArrayInputStream;
import java.io.IOException;

/**
 * Guards the endpoints that make this agent allocate, import or spawn: /v1/exports*, /v1/imports, /v1/ladder.
 * The Authorization header is judged before the body is read (a stranger costs no read and no driver call);
 * an HMAC-signed request then has its body read (bounded) and checked against the signature. Whatever the
 * credential, the body of a guarded request is read here, at most {@link Wire#MAX_BODY} bytes: a
 * bigger one is refused before it is in memory, so no caller can make the agent buffer a gigabyte. The ladder
 * is for token holders only: without a token it is refused even where imexprobe.auth.required=false opens
 * exports and imports.
 */
public class AgentAuthFilter extends OncePerRequestFilter {

    /**
     * Set on a request this filter let through: /v1/imports passes two of them (one before DirectRoutes, one for
     * the rest of /v1/*), and the second lets it on unchecked, its body already read.
     */
    static final String CHECKED = AgentAuthFilter.class.getName() + ".CHECKED";

    private final AgentSignature signature;
    private final boolean required;
    /** @param signature null when no token is configured: then {@code required} decides */
    public AgentAuthFilter(AgentSignature signature, boolean required) {
        this.signature = signature;
        this.required = required;
    }

    /**
     * The route a guarded path is served by, as MVC names it in http.server.requests' {@code uri}; null for a path
     * no route serves. A request refused here never reaches MVC, which would leave its uri UNKNOWN: an operator
     * could not tell a peer's stale token on /v1/imports from a stranger's call to /v1/ladder.
     */
    static String route(String path) {
        if (path.equals("/v1/exports") || path.equals("/v1/imports") || path.equals("/v1/ladder")) {
            return path;
        }
        if (!path.startsWith("/v1/exports/")) {
            return null;
        }
        String rest = path.substring("/v1/exports/".length());
        int slash = rest.indexOf('/');
        if (slash < 0) {
            return rest.isEmpty() ? null : "/v1/exports/{id}";
        }
        return slash > 0 && rest.substring(slash).equals("/verify") ? "/v1/exports/{id}/verify" : null;
    }

    static boolean guarded(String path) {
        return path.equals("/v1/exports") || path.startsWith("/v1/exports/") || path.equals("/v1/imports")
                || path.equals("/v1/ladder");
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !guarded(dispatchPath(request));
    }

    /**
     * The path the request is dispatched by: decoded, normalised and without path parameters, as the container
     * maps it. Never the raw URI: /v1/imports;x=1 and /v1/%69mports reach the import controller too.
     */
    static String dispatchPath(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        return (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (request.getAttribute(CHECKED) != null) {
            chain.doFilter(request, response);
            return;
        }
        if (signature == null) {
            if (dispatchPath(request).equals("/v1/ladder")) {
                refuse(request, response, "this agent has no shared token, and the ladder (it starts processes) is "
                        + "served to token holders only: set IMEXPROBE_AUTH_TOKEN");
                return;
            }
            if (required) {
                refuse(request, response, "this agent has no shared token, so it accepts no export or import requests: "
                        + "set IMEXPROBE_AUTH_TOKEN (or imexprobe.auth.required=false on a trusted lab network)");
                return;
            }
            passWithBoundedBody(request, response, chain);
            return;
        }
        String header = request.getHeader("Authorization");
        AgentSignature.Verdict pre = signature.precheck(header);
        if (!pre.ok() && !pre.needsBody()) {
            refuse(request, response, pre.detail());
            return;
        }
        if (!pre.needsBody()) {
            passWithBoundedBody(request, response, chain);
            return;
        }
        byte[] body = readBounded(request, Wire.MAX_BODY);
        if (body == null) {
            refuse(request, response, "request body larger than " + Wire.MAX_BODY + " bytes");
            return;
        }
        String query = request.getQueryString();
        String pathAndQuery = request.getRequestURI() + (query != null ? "?" + query : "");
        AgentSignature.Verdict v = signature.verify(header, request.getMethod(), pathAndQuery, body);
        if (!v.ok()) {
            refuse(request, response, v.detail());
            return;
        }
        pass(request, body, response, chain);
    }

    /** An authenticated request goes on with its body read here: at most MAX_BODY bytes, else 400 unread. */
    private void passWithBoundedBody(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long declared = request.getContentLengthLong();
        byte[] body = readBounded(request, Wire.MAX_BODY);
        if (body == null) {
            named(request);
            ProblemJson.write(response, ProblemJson.problem(HttpStatus.BAD_REQUEST, "invalid-input",
                    Wire.tooLarge(declared)));
            return;
        }
        pass(request, body, response, chain);
    }

    private static void pass(HttpServletRequest request, byte[] body, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        request.setAttribute(CHECKED, Boolean.TRUE);
        chain.doFilter(new CachedBody(request, body), response);
    }

    private void refuse(HttpServletRequest request, HttpServletResponse response, String detail) throws IOException {
        named(request);
        response.setHeader("WWW-Authenticate", "Bearer, " + AgentSignature.HMAC_SCHEME);
        ProblemJson.write(response, ProblemJson.problem(HttpStatus.UNAUTHORIZED, "unauthorized", detail));
    }

    /** Names the route of a request answered here for http.server.requests, whichever timer records it. */
    private static void named(HttpServletRequest request) {
        String route = route(dispatchPath(request));
        if (route != null) {
            request.setAttribute(RouteTimer.PATTERN, route); // /v1/imports: RouteTimer
            ServerHttpObservationFilter.findObservationContext(request).ifPresent(c -> c.setPathPattern(route));
        }
    }

    /**
     * The body, at most max bytes; null when there are more (a declared length over max is refused unread). A body
     * of declared length is read into an array of that length: readNBytes(max + 1) took a 16 KiB buffer and a copy
     * for every request, a third of what an importer allocated per probe (docs/performance.md, session p).
     */
    static byte[] readBounded(HttpServletRequest request, int max) throws IOException {
        long declared = request.getContentLengthLong();
        if (declared > max) {
            return null;
        }
        // The container's stream ends at the declared length; without one (chunked) at most max + 1 bytes are read.
        byte[] data = request.getInputStream().readNBytes(declared >= 0 ? (int) declared : max + 1);
        return data.length > max ? null : data;
    }

    /** The request with its body already read, so the controller can read it again. */
    static final class CachedBody extends HttpServletRequestWrapper {
        private final byte[] body;

        CachedBody(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("synchronous reads only");
                }

                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }
            };
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
