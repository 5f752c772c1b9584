package dev.imexprobe.web;

import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.api.Wire;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.probe.ProbeReport;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.Validator;

import org.apache.tomcat.util.http.InvalidParameterException;

import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.filter.OncePerRequestFilter;

import tools.jackson.databind.json.JsonMapper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * The probe's hot path without Spring MVC's dispatch: {@code GET /probe} (JSON) and {@code POST /v1/imports} are
 * answered here by the same controller methods, the request record read and validated by the same
 * {@link Wire#read}, the answer written with the same {@code JsonMapper}, and refused with the same problem documents ({@link Problems}' own handlers), after the same filters (the auth filter included).
 * MVC's handler mapping, argument resolution, content negotiation and return-value handling cost about as much
 * as the rest of the request (docs/performance.md, "The hot path"), once per exchange on each side.
 *
 * <p>Only requests this filter answers exactly as MVC would are taken: JSON asked for (no Accept, {@code *}/{@code *}
 * or {@code application/json}), each parameter at most once, a query Tomcat can decode, for /v1/imports a JSON
 * body. Everything else (format=prometheus, another Accept, an empty body, …) goes on to MVC unchanged.
 */
public class DirectRoutes extends OncePerRequestFilter {

    static final String PROBE = "/probe";
    static final String IMPORTS = "/v1/imports";

    private final ProbeController probe;
    private final ImportController imports;
    private final Problems problems;
    private final JsonMapper json;
    private final Validator validator;
    private final ProbeRecorder recorder;

    public DirectRoutes(ProbeController probe, ImportController imports, Problems problems, JsonMapper json,
                        Validator validator, ProbeRecorder recorder) {
        this.probe = probe;
        this.imports = imports;
        this.problems = problems;
        this.json = json;
        this.validator = validator;
        this.recorder = recorder;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String path = AgentAuthFilter.dispatchPath(request);
        return !((path.equals(PROBE) && request.getMethod().equals("GET"))
                || (path.equals(IMPORTS) && request.getMethod().equals("POST")));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String path = AgentAuthFilter.dispatchPath(request);
        if (!acceptsJson(request)) {
            chain.doFilter(request, response);
            return;
        }
        boolean handled = path.equals(PROBE) ? probe(request, response) : importHandle(request, response);
        if (!handled) {
            chain.doFilter(request, response);
        }
    }

    private boolean probe(HttpServletRequest request, HttpServletResponse response) throws IOException {
        List<String> names = ProbeController.PARAMETERS;
        String[] p = new String[names.size()];
        int given = 0;
        boolean unknown;
        try {
            for (int i = 0; i < p.length; i++) {
                String[] values = request.getParameterValues(names.get(i));
                if (values != null && values.length > 1) {
                    return false; // MVC joins repeated values: leave that to it
                }
                p[i] = values == null ? null : values[0];
                given += values == null ? 0 : 1;
            }
            unknown = given != request.getParameterMap().size(); // refused below, as MVC does (KnownParameters)
        } catch (InvalidParameterException e) {
            return false; // MVC answers an undecodable query (Problems.undecodableQuery)
        }
        if (p[7] != null && !p[7].isEmpty() && !p[7].equalsIgnoreCase("json")) {
            return false; // the Prometheus text: MVC's content negotiation
        }
        Enumeration<String> scrape = request.getHeaders(ProbeBudget.SCRAPE_TIMEOUT);
        List<String> scrapeValues = scrape == null ? List.of() : Collections.list(scrape);
        if (scrapeValues.size() > 1) {
            return false;
        }
        observed(request, PROBE);
        ProbeReport report;
        try {
            if (unknown) {
                KnownParameters.check(request, names);
            }
            report = probe.report(p[0], orDefault(p[1], "both"), p[2], p[3], p[4], orDefault(p[5], "true"),
                    orDefault(p[6], "false"), orDefault(p[7], "json"), p[8],
                    scrapeValues.isEmpty() ? null : scrapeValues.getFirst());
        } catch (RuntimeException e) {
            problem(request, response, problems.answer(e, request));
            return true;
        }
        // Tomcat sends an answer of known length as its last byte is written: the recorder thread is woken after.
        ProbeRecorder.Promise recorded = recorder.promise();
        try {
            write(response, 200, MediaType.APPLICATION_JSON_VALUE, report);
        } finally {
            recorded.record(report.results());
        }
        return true;
    }

    private boolean importHandle(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (request.getContentLengthLong() <= 0 || !isJson(request.getContentType())) {
            return false; // MVC's own answers for a missing body or another content type
        }
        byte[] body = AgentAuthFilter.readBounded(request, Wire.MAX_BODY);
        if (body == null || body.length == 0) {
            return false;
        }
        observed(request, IMPORTS);
        Object reply;
        try {
            ImportRequest read = Wire.read(body, ImportRequest.class, validator); // what @Valid checks
            // A peer agent's exchange (it sent the pattern's seed): the answer's head goes out as soon as this
            // importer is done with the memory's contents, and the exporter checks and releases its side while
            // this one releases and writes the body (docs/architecture.md, "The exchange" under "One exchange").
            reply = imports.importHandle(read, read.seed() == null ? null : () -> commitHead(response));
        } catch (RuntimeException e) {
            if (response.isCommitted()) {
                throw e; // the head is out: Tomcat ends the connection, and the exporter sees the answer cut short
            }
            problem(request, response, problems.answer(e, request));
            return true;
        }
        write(response, 200, MediaType.APPLICATION_JSON_VALUE, reply);
        return true;
    }

    /** The import's answer is 200 whatever its stages found: its status line and headers, sent now. */
    private static void commitHead(HttpServletResponse response) {
        response.setStatus(200);
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        try {
            response.flushBuffer();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the exporter is gone; writing the body fails the same way
        }
    }

    /** JSON is what the caller takes: no Accept, any type, or application/json (what the agents send). */
    static boolean acceptsJson(HttpServletRequest request) {
        Enumeration<String> accepts = request.getHeaders("Accept");
        if (accepts == null || !accepts.hasMoreElements()) {
            return true;
        }
        String accept = accepts.nextElement().trim();
        return !accepts.hasMoreElements() && (accept.isEmpty() || accept.equals("*/*")
                || accept.equals(MediaType.APPLICATION_JSON_VALUE));
    }

    private static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semi = contentType.indexOf(';');
        return (semi < 0 ? contentType : contentType.substring(0, semi)).trim()
                .equalsIgnoreCase(MediaType.APPLICATION_JSON_VALUE);
    }

    private static String orDefault(String v, String fallback) {
        return v == null || v.isEmpty() ? fallback : v; // @RequestParam's defaultValue: missing or empty
    }

    /** http.server.requests names the route as MVC would have (RouteTimer times it). */
    private static void observed(HttpServletRequest request, String pattern) {
        request.setAttribute(RouteTimer.PATTERN, pattern);
    }

    private void problem(HttpServletRequest request, HttpServletResponse response, ResponseEntity<ProblemDetail> r)
            throws IOException {
        ProblemDetail p = r.getBody();
        if (p != null && p.getInstance() == null) {
            p.setInstance(URI.create(request.getRequestURI())); // as MVC fills it in
        }
        r.getHeaders().forEach((name, values) -> {
            if (!name.equalsIgnoreCase("Content-Type")) {
                values.forEach(v -> response.addHeader(name, v));
            }
        });
        byte[] bytes = ProblemJson.text(p).getBytes(StandardCharsets.UTF_8); // the one problem writer
        response.setStatus(r.getStatusCode().value());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    /**
     * One write with its length: no chunking, no second flush (chunked when the head went out before). The JSON is
     * written into this request thread's own buffer, kept between requests, rather than into a new array and a copy
     * of it for every answer (the report's 2 KB and the import's reply were 4 KiB of garbage per probe).
     */
    private void write(HttpServletResponse response, int status, String contentType, Object body) throws IOException {
        Answer answer = ANSWERS.get(); // empty: each use ends with trim()
        try {
            json.writeValue(answer, body);
            if (!response.isCommitted()) {
                response.setStatus(status);
                response.setContentType(contentType);
                response.setContentLength(answer.size());
            }
            answer.writeTo(response.getOutputStream());
        } finally {
            answer.trim();
        }
    }

    private static final ThreadLocal<Answer> ANSWERS = ThreadLocal.withInitial(Answer::new);

    /** A request thread's answer buffer; one that grew past {@link #KEPT} for a large answer is not kept. */
    static final class Answer extends ByteArrayOutputStream {

        static final int KEPT = 16 * 1024;

        Answer() {
            super(4096);
        }

        /** Empties the buffer for the next answer, and lets one grown past {@link #KEPT} go. */
        void trim() {
            if (buf.length > KEPT) {
                buf = new byte[4096];
            }
            count = 0;
        }

        int kept() {
            return buf.length;
        }
    }
}
