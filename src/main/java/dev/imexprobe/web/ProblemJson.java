package dev.imexprobe.web;

import dev.imexprobe.json.Json;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The agent's one problem+json document (RFC 9457, type urn:imexprobe:problem:&lt;code&gt;): built here for every
 * error, and written here for the answers given outside Spring MVC (the auth filter, actuator's bare errors,
 * Tomcat's own refusals), in the shape MVC gives the rest.
 */
public final class ProblemJson {

    public static final String TYPE_PREFIX = "urn:imexprobe:problem:";

    private ProblemJson() {
    }

    public static ProblemDetail problem(HttpStatusCode status, String code, String detail) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(status, detail);
        p.setType(URI.create(TYPE_PREFIX + code));
        p.setTitle(reason(status.value()));
        return p;
    }

    /** The problem code of a status raised by Spring or the container: invalid-input for 400, else its name. */
    public static String code(HttpStatusCode status) {
        if (status.value() == 400) {
            return "invalid-input";
        }
        HttpStatus known = HttpStatus.resolve(status.value());
        return known != null ? known.name().toLowerCase(Locale.ROOT).replace('_', '-') : "error";
    }

    static String reason(int status) {
        HttpStatus known = HttpStatus.resolve(status);
        return known != null ? known.getReasonPhrase() : "HTTP " + status;
    }

    /** The document as MVC writes a ProblemDetail: its members, absent ones left out, extra properties inline. */
    static String text(ProblemDetail p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", p.getType().toString());
        m.put("title", p.getTitle());
        m.put("status", p.getStatus());
        if (p.getDetail() != null) {
            m.put("detail", p.getDetail());
        }
        if (p.getInstance() != null) {
            m.put("instance", p.getInstance().toString());
        }
        if (p.getProperties() != null) {
            m.putAll(p.getProperties());
        }
        return Json.MAPPER.writeValueAsString(m);
    }

    /** Answers with the problem outside MVC: its status, the problem+json type, the document. */
    static void write(HttpServletResponse response, ProblemDetail p) throws IOException {
        response.setStatus(p.getStatus());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.getOutputStream().write(text(p).getBytes(StandardCharsets.UTF_8));
    }
}
