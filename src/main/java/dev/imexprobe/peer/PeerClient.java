package dev.imexprobe.peer;

import dev.imexprobe.probe.ExportReply;
import dev.imexprobe.probe.ImportReply;
import dev.imexprobe.probe.StageReply;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Calls other agents' REST API. One HttpClient (keep-alive) for all peers, a deadline on every call, every
 * agent-to-agent request signed, and every answer checked against the shape the API promises: a peer that
 * answers garbage, slowly or not at all produces a {@link PeerCall} saying so, never an exception.
 */
public final class PeerClient {

    private static final int MAX_REPLY = 1 << 20;

    private final HttpClient http;
    private final JsonMapper json;
    private final Duration timeout;
    private final RequestSigner signer;

    public PeerClient(HttpClient http, JsonMapper json, Duration timeout, RequestSigner signer) {
        this.http = http;
        this.json = json;
        this.timeout = timeout;
        this.signer = signer;
    }

    public static HttpClient defaultHttpClient(Duration connectTimeout) {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    /** GET /v1/node: the peer's identity and GPUs (unauthenticated, read-only). */
    public PeerCall<JsonNode> node(String target) {
        return call(target, "GET", "/v1/node", null, JsonNode.class, false);
    }

    public PeerCall<ImportReply> postImport(String target, Map<String, Object> request) {
        return call(target, "POST", "/v1/imports", request, ImportReply.class, true);
    }

    public PeerCall<ExportReply> postExport(String target, Map<String, Object> request) {
        return call(target, "POST", "/v1/exports", request, ExportReply.class, true);
    }

    public PeerCall<StageReply> verifyExport(String target, String id, long seed) {
        return call(target, "POST", "/v1/exports/" + id + "/verify", Map.of("seed", Long.toString(seed)),
                StageReply.class, true);
    }

    public PeerCall<StageReply> deleteExport(String target, String id) {
        return call(target, "DELETE", "/v1/exports/" + id, null, StageReply.class, true);
    }

    /** GET /v1/mesh of a peer, for the merged matrix page. */
    public PeerCall<JsonNode> mesh(String target) {
        return call(target, "GET", "/v1/mesh", null, JsonNode.class, false);
    }

    private <T> PeerCall<T> call(String target, String method, String path, Object body, Class<T> type,
                                 boolean signed) {
        long start = System.nanoTime();
        byte[] bytes = body == null ? new byte[0] : json.writeValueAsBytes(body);
        HttpRequest.Builder b;
        try {
            b = HttpRequest.newBuilder(URI.create("http://" + target + path)).timeout(timeout);
        } catch (IllegalArgumentException e) {
            return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, "not a valid host:port: " + target, 0);
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(bytes));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        b.header("Accept", "application/json");
        if (signed && signer != null) {
            String auth = signer.authorization(method, path, bytes);
            if (auth != null) {
                b.header("Authorization", auth);
            }
        }
        HttpResponse<byte[]> response;
        // The request's own timeout covers the wait for the headers only: a peer that trickles its body would hold
        // the probe for as long as it likes. This deadline covers the whole answer, and the size is capped while
        // it arrives, not after.
        CompletableFuture<HttpResponse<byte[]>> pending = http.sendAsync(b.build(),
                HttpResponse.BodyHandlers.limiting(HttpResponse.BodyHandlers.ofByteArray(), MAX_REPLY));
        try {
            response = pending.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            pending.cancel(true);
            return noAnswer(method, path, target, start);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            while (c instanceof CompletionException && c.getCause() != null) {
                c = c.getCause();
            }
            if (c instanceof HttpConnectTimeoutException) {
                return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, "connect to " + target + " timed out",
                        System.nanoTime() - start);
            }
            if (c instanceof HttpTimeoutException) {
                return noAnswer(method, path, target, start);
            }
            if (c instanceof ConnectException || c instanceof UnresolvedAddressException) {
                return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, "cannot connect to " + target + ": "
                        + (c.getMessage() != null ? c.getMessage() : c.getClass().getSimpleName()),
                        System.nanoTime() - start);
            }
            if (c instanceof IOException && c.getMessage() != null && c.getMessage().startsWith("body exceeds capacity")) {
                return PeerCall.failed(PeerCall.Kind.GARBLED, 0, "answer larger than " + MAX_REPLY + " bytes",
                        System.nanoTime() - start);
            }
            return PeerCall.failed(PeerCall.Kind.UNREACHABLE, 0, method + " " + path + " on " + target + " failed: "
                    + c.getClass().getSimpleName() + (c.getMessage() != null ? " " + c.getMessage() : ""),
                    System.nanoTime() - start);
        } catch (InterruptedException e) {
            pending.cancel(true);
            Thread.currentThread().interrupt();
            return PeerCall.failed(PeerCall.Kind.TIMEOUT, 0, "interrupted", System.nanoTime() - start);
        }
        long nanos = System.nanoTime() - start;
        int status = response.statusCode();
        byte[] reply = response.body();
        if (status >= 400 && status < 500) {
            return PeerCall.failed(PeerCall.Kind.REJECTED, status, status + " " + problemDetail(reply), nanos);
        }
        if (status < 200 || status >= 300) {
            return PeerCall.failed(PeerCall.Kind.GARBLED, status, "HTTP " + status + " " + problemDetail(reply), nanos);
        }
        try {
            T value = json.readValue(reply, type);
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
        return PeerCall.failed(PeerCall.Kind.TIMEOUT, 0, method + " " + path + " on " + target
                + " got no answer within " + timeout.toMillis() + " ms", System.nanoTime() - start);
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
