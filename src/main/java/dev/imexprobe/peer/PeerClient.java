package dev.imexprobe.peer;

import dev.imexprobe.api.ExportReply;
import dev.imexprobe.api.ExportRequest;
import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.api.StageReply;
import dev.imexprobe.api.VerifyRequest;
import dev.imexprobe.probe.ProbeDeadline;
import dev.imexprobe.trace.Timeline;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Calls other agents' REST API. One {@link PeerHttp} (keep-alive) for all peers, a deadline on every call, every
 * agent-to-agent request signed, and every answer checked against the shape the API promises: a peer that
 * answers garbage, slowly or not at all produces a {@link PeerCall} saying so, never an exception.
 */
public final class PeerClient {

    /** No agent's answer comes near this; a bigger one is refused while it arrives. */
    public static final int MAX_REPLY = 1 << 20;

    private final PeerHttp http;
    private final JsonMapper json;
    private final Duration timeout;
    private final RequestSigner signer;

    public PeerClient(PeerHttp http, JsonMapper json, RequestSigner signer) {
        this.http = http;
        this.json = json;
        this.timeout = http.timeout();
        this.signer = signer;
    }

    /**
     * Marks an export asked for by an agent's probe (a pull): such exports may use the slots kept for probes,
     * which manual exports cannot take. Not a credential: whoever holds the token is trusted either way; the mark
     * only keeps an operator's long-lived exports from starving the mesh by accident.
     */
    public static final String EXPORT_FOR = "X-Imexprobe-Export-For";
    public static final String FOR_PROBE = "probe";

    /** The transport the agent uses: connect within the same deadline as the whole answer. */
    /** How long one call may take (connect, send, the whole answer). */
    public Duration timeout() {
        return timeout;
    }

    public static PeerHttp defaultHttp(Duration timeout) {
        return new PeerHttp(timeout, timeout, MAX_REPLY);
    }

    /** GET /v1/node: the peer's identity and GPUs (unauthenticated, read-only). */
    public PeerCall<JsonNode> node(String target) {
        return call(target, "GET", "/v1/node", null, JsonNode.class, false);
    }

    public PeerCall<ImportReply> postImport(String target, ImportRequest request) {
        return call(target, "POST", "/v1/imports", request, ImportReply.class, true);
    }

    public PeerCall<ExportReply> postExport(String target, ExportRequest request) {
        return call(target, "POST", "/v1/exports", request, ExportReply.class, true);
    }

    public PeerCall<StageReply> verifyExport(String target, String id, long seed) {
        return call(target, "POST", "/v1/exports/" + id + "/verify", new VerifyRequest(seed),
                StageReply.class, true);
    }

    public PeerCall<StageReply> deleteExport(String target, String id) {
        return call(target, "DELETE", "/v1/exports/" + id, null, StageReply.class, true);
    }

    /**
     * GET /v1/mesh of a peer, for the merged matrix page; without {@code across}, without its pairs apart by design
     * (across IMEX domains, never probed: the bulk of an answer in a cluster of many domains). An answer with them
     * that passes the cap is asked again without them. A peer older than that parameter refuses it (400): it is asked
     * again for everything.
     */
    public PeerCall<JsonNode> mesh(String target, boolean across) {
        if (across) {
            PeerCall<JsonNode> all = call(target, "GET", "/v1/mesh", null, JsonNode.class, false);
            boolean tooLarge = all.kind() == PeerCall.Kind.GARBLED && all.detail() != null
                    && all.detail().startsWith(PeerHttp.TooLarge.MESSAGE);
            return tooLarge ? mesh(target, false) : all;
        }
        PeerCall<JsonNode> c = call(target, "GET", "/v1/mesh?across=false", null, JsonNode.class, false);
        return c.kind() == PeerCall.Kind.REJECTED && c.httpStatus() == 400
                ? call(target, "GET", "/v1/mesh", null, JsonNode.class, false) : c;
    }

    /** GET /v1/preflight of another preflight instance: who it is, how far it got, its pairs once done. */
    public PeerCall<JsonNode> preflight(String target) {
        return call(target, "GET", "/v1/preflight", null, JsonNode.class, false);
    }

    private <T> PeerCall<T> call(String target, String method, String path, Object body, Class<T> type,
                                 boolean signed) {
        long start = System.nanoTime();
        if (Thread.currentThread().isInterrupted()) {
            return PeerCall.failed(PeerCall.Kind.TIMEOUT, 0, "interrupted", 0);
        }
        byte[] bytes = body == null ? null : json.writeValueAsBytes(body);
        Map<String, String> headers = new LinkedHashMap<>();
        if (body != null) {
            headers.put("Content-Type", "application/json");
        }
        headers.put("Accept", "application/json");
        if (method.equals("POST") && path.equals("/v1/exports")) {
            headers.put(EXPORT_FOR, FOR_PROBE);
        }
        String auth = signed && signer != null
                ? signer.authorization(method, path, bytes == null ? new byte[0] : bytes) : null;
        if (auth != null) {
            headers.put("Authorization", auth);
        }
        boolean unsigned = signed && auth == null; // no token here: only a peer that requires none takes it
        PeerHttp.Answer response;
        long sending = System.nanoTime();
        try {
            response = ProbeDeadline.bound() ? http.exchange(target, method, path, bytes, headers, ProbeDeadline.nanos())
                    : http.exchange(target, method, path, bytes, headers);
        } catch (IllegalArgumentException e) {
            return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, "not a valid host:port: " + target, 0);
        } catch (PeerHttp.ConnectTimeout e) {
            return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, e.getMessage(), System.nanoTime() - start);
        } catch (PeerHttp.NoAnswer e) {
            return noAnswer(method, path, target, start);
        } catch (PeerHttp.TooLarge e) {
            return PeerCall.failed(PeerCall.Kind.GARBLED, 0, e.getMessage(), System.nanoTime() - start);
        } catch (ConnectException | UnknownHostException | NoRouteToHostException e) {
            return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, "cannot connect to " + target + ": "
                    + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()),
                    System.nanoTime() - start);
        } catch (IOException e) {
            return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, method + " " + path + " on " + target + " failed: "
                    + e.getClass().getSimpleName() + (e.getMessage() != null ? " " + e.getMessage() : ""),
                    System.nanoTime() - start);
        }
        long nanos = System.nanoTime() - start;
        int status = response.status();
        byte[] reply = response.body();
        if (status == 401 && unsigned) {
            return PeerCall.failed(PeerCall.Kind.UNSIGNED, status, status + " " + problemDetail(reply), nanos);
        }
        if (status >= 400 && status < 500) {
            return PeerCall.failed(PeerCall.Kind.REJECTED, status, status + " " + problemDetail(reply), nanos);
        }
        if (status < 200 || status >= 300) {
            return PeerCall.failed(PeerCall.Kind.GARBLED, status, "HTTP " + status + " " + problemDetail(reply), nanos);
        }
        try {
            T value = json.readValue(reply, type);
            Timeline.peerCall(path, start, sending, start + nanos, System.nanoTime());
            if (value == null) {
                return PeerCall.failed(PeerCall.Kind.GARBLED, status, "empty answer", nanos);
            }
            return PeerCall.ok(value, status, nanos);
        } catch (JacksonException e) {
            return PeerCall.failed(PeerCall.Kind.GARBLED, status, "answer is not a valid " + type.getSimpleName()
                    + ": " + e.getOriginalMessage(), nanos);
        }
    }

    private <T> PeerCall<T> noAnswer(String method, String path, String target, long start) {
        long waited = System.nanoTime() - start;
        String bound = ProbeDeadline.bound() && ProbeDeadline.nanos() - start < timeout.toNanos()
                ? "before the probe's deadline (" + waited / 1_000_000 + " ms)" : "within " + timeout.toMillis() + " ms";
        return PeerCall.failed(PeerCall.Kind.TIMEOUT, 0, method + " " + path + " on " + target
                + " got no answer " + bound, waited);
    }

    /** The peer's stated reason (problem+json detail) or the start of its body. */
    private String problemDetail(byte[] reply) {
        try {
            JsonNode n = json.readTree(reply);
            if (n != null && n.hasNonNull("detail")) {
                return n.get("detail").asString();
            }
        } catch (JacksonException e) {
            // not JSON: show what it was
        }
        String text = new String(reply, 0, Math.min(reply.length, 200), StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? "(empty body)" : text;
    }
}
