package dev.imexprobe.web;

import dev.imexprobe.peer.AgentSignature;
import dev.imexprobe.security.RawHttp;
import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.RawAnswers;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The REST surface of one agent, as an operator and a stranger see it: authentication before any driver call
 * (and before the body is read), every invalid input refused with the right status and a problem+json naming the
 * problem, and the export → import → verify → delete flow by hand. "No driver call" is observed, not assumed:
 * the agent's fault file carries a malformed item that the fake reports in the agent's log on the next call of
 * any driver entry point.
 */
class AgentApiIT {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long MIB2 = 2L << 20;
    private static final String PROBLEM = "urn:imexprobe:problem:";

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess agent;
    /** Another agent on the same machine, for the probes: an agent refuses to probe itself. */
    static AgentProcess peer;
    static String gpu0;
    static String gpu1;
    private final List<String> exports = new ArrayList<>();

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine")).gpus(2);
        // The context linger outlasts the class: its release, a driver call of a timer thread 2 s (the default)
        // after the last allocation, would trip the driver-call detector of whichever test runs at that moment.
        // IMEXPROBE_EXPORT_MAX is misspelt on purpose: read, it would cap exports at 1 and the cap tests would fail
        agent = AgentProcess.start("api", dir, machine.env(), "node-api", Map.of("IMEXPROBE_EXPORTS_MAX", "3",
                "IMEXPROBE_DRIVER_CONTEXTLINGER", "1h", "IMEXPROBE_EXPORT_MAX", "1")).awaitReady();
        peer = AgentProcess.start("api-peer", dir, machine.env(), "node-api-peer",
                Map.of("IMEXPROBE_DRIVER_CONTEXTLINGER", "1h")).awaitReady();
        JsonNode gpus = agent.get("/v1/node").json().get("gpus");
        gpu0 = gpus.get(0).get("uuid").asString();
        gpu1 = gpus.get(1).get("uuid").asString();
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(agent, peer);
    }

    @AfterEach
    void releaseAndCheck() {
        agent.clearFaults();
        exports.forEach(id -> agent.delete("/v1/exports/" + id));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).isEmpty();
            assertThat(agent.liveAllocations()).isZero();
        });
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    private static String randomHandle() {
        byte[] b = new byte[64];
        new Random(7).nextBytes(b);
        return Base64.getEncoder().encodeToString(b);
    }

    private static String importBody() {
        return "{\"handle\":\"" + randomHandle() + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":" + MIB2 + "}";
    }

    private static AgentProcess.Reply send(String method, String path, String body, String authorization) {
        return send(method, path, body, authorization, null);
    }

    private static AgentProcess.Reply send(String method, String path, String body, String authorization,
                                           String accept) {
        HttpRequest.Builder b = HttpRequest.newBuilder(agent.uri(path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        if (accept != null) {
            b.header("Accept", accept);
        }
        return agent.send(b, Duration.ofSeconds(30));
    }

    /** Runs a request that must not reach the driver, and proves it did not: see the class comment. */
    private static AgentProcess.Reply withoutDriverCall(java.util.function.Supplier<AgentProcess.Reply> request) {
        String marker = agent.faultsWithCallMarker("");
        AgentProcess.Reply reply = request.get();
        assertThat(agent.driverCalledSince(marker)).as("a driver call was made for %s", reply).isFalse();
        // The detector works: an import of a garbage handle does call the driver (801), and the fake says so.
        AgentProcess.Reply control = agent.post("/v1/imports", importBody());
        assertThat(control.status()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.driverCalledSince(marker));
        agent.clearFaults();
        return reply;
    }

    private static void assertProblem(AgentProcess.Reply r, int status, String code, String detail) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        assertThat(r.contentType()).as("%s", r).startsWith("application/problem+json");
        JsonNode p = r.json();
        assertThat(p.get("type").asString()).isEqualTo(PROBLEM + code);
        assertThat(p.get("status").asInt()).isEqualTo(status);
        assertThat(p.get("title").asString()).isNotBlank();
        if (detail.endsWith("…")) {
            assertThat(p.get("detail").asString()).startsWith(detail.substring(0, detail.length() - 1));
        } else {
            assertThat(p.get("detail").asString()).isEqualTo(detail);
        }
    }

    // ---- authentication ------------------------------------------------------------------------------------------

    record Credential(String name, String method, String path, String authorization, String detail) {
        @Override
        public String toString() {
            return method + " " + path + " with " + name;
        }
    }

    private static final String MISSING = "no Authorization header: send 'Authorization: Bearer <token>' with the "
            + "agents' shared token (imexprobe.auth.token)";
    private static final String WRONG = "bearer token is wrong: use the agents' shared token (imexprobe.auth.token)";
    private static final String BAD_SIGNATURE = "signature does not match this request: the agents' tokens differ "
            + "(imexprobe.auth.token) or a proxy changed the method, path, query or body";

    static Stream<Credential> badCredentials() {
        String body = importBody();
        AgentSignature otherToken = new AgentSignature("another-token-0123456789", Clock.systemUTC());
        AgentSignature ours = new AgentSignature(AgentProcess.TOKEN, Clock.systemUTC());
        AgentSignature twoMinutesAgo = new AgentSignature(AgentProcess.TOKEN,
                Clock.fixed(Instant.now().minusSeconds(120), ZoneOffset.UTC));
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return Stream.of(
                new Credential("nothing", "POST", "/v1/imports", null, MISSING),
                new Credential("a wrong bearer token", "POST", "/v1/imports", "Bearer wrong-token-wrong-token", WRONG),
                new Credential("the token plus one character", "POST", "/v1/imports",
                        "Bearer " + AgentProcess.TOKEN + "x", WRONG),
                new Credential("an empty bearer", "POST", "/v1/imports", "Bearer",
                        "Authorization header 'Bearer' carries no token: send 'Authorization: Bearer <token>'"),
                new Credential("basic auth", "POST", "/v1/imports", "Basic dXNlcjpwYXNz", "Authorization scheme is not "
                        + "accepted here: use 'Bearer <token>' or an agent's 'IMEXPROBE-HMAC' signature"),
                new Credential("a malformed signature", "POST", "/v1/imports", "IMEXPROBE-HMAC garbage",
                        "Authorization header is not 'IMEXPROBE-HMAC ts=<unix seconds>,sig=<base64url>' nor "
                                + "'Bearer <token>'"),
                new Credential("a signature made with another token", "POST", "/v1/imports",
                        otherToken.sign("POST", "/v1/imports", bytes), BAD_SIGNATURE),
                new Credential("a signature for another path", "POST", "/v1/imports",
                        ours.sign("POST", "/v1/exports", bytes), BAD_SIGNATURE),
                new Credential("a signature two minutes old", "POST", "/v1/imports",
                        twoMinutesAgo.sign("POST", "/v1/imports", bytes), "signature timestamp is 12…"),
                new Credential("nothing", "POST", "/v1/exports", null, MISSING),
                new Credential("nothing", "POST", "/v1/exports/some-id/verify", null, MISSING),
                new Credential("nothing", "DELETE", "/v1/exports/some-id", null, MISSING),
                // The same endpoints under other spellings of their path: what the container dispatches counts.
                new Credential("nothing", "POST", "/v1/imports;x=1", null, MISSING),
                new Credential("nothing", "POST", "/v1/%69mports", null, MISSING),
                new Credential("nothing", "POST", "/v1/exports;a=b", null, MISSING),
                new Credential("nothing", "POST", "/v1/e%78ports", null, MISSING),
                new Credential("nothing", "DELETE", "/v1/exports/some-id;x=1", null, MISSING),
                new Credential("nothing", "POST", "/v1/exports/some-id/verify;x=1", null, MISSING));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badCredentials")
    void withoutTheRightCredentialItIs401AndNoDriverCall(Credential c) {
        String body = c.path().contains("imports") || c.path().contains("%69") ? importBody()
                : c.path().contains("verify") ? "{\"seed\":1}" : c.method().equals("DELETE") ? null : "{}";
        AgentProcess.Reply r = withoutDriverCall(() -> send(c.method(), c.path(), body, c.authorization()));
        assertProblem(r, 401, "unauthorized", c.detail());
        assertThat(r.header("WWW-Authenticate")).contains("Bearer, IMEXPROBE-HMAC");
        assertThat(r.body()).doesNotContain(AgentProcess.TOKEN);
    }

    /**
     * A variable no setting reads is named in the log with the setting it was likely meant for, and only it: every
     * other variable this agent was given (token, node name, mesh, peers, exports, linger) was read.
     */
    @Test
    void aMisspeltVariableIsNamedInTheLogWithTheSettingItWasMeantFor() {
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.logText().contains("no setting of imexprobe reads it"));
        List<String> unread = agent.logText().lines().filter(l -> l.contains("no setting of imexprobe reads it"))
                .map(l -> l.substring(l.indexOf(": ") + 2)).toList();
        assertThat(unread).containsExactly("IMEXPROBE_EXPORT_MAX is set, but no setting of imexprobe reads it, so it"
                + " changes nothing (did you mean IMEXPROBE_EXPORTS_MAX?); docs/deploy.md (Values overview) lists the"
                + " settings and their variables");
    }

    @Test
    void aValidSignatureIsAcceptedLikeAnAgentsOwn() {
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        String auth = new AgentSignature(AgentProcess.TOKEN, Clock.systemUTC()).sign("POST", "/v1/exports", body);
        AgentProcess.Reply r = send("POST", "/v1/exports", "{}", auth);
        assertThat(r.status()).as("%s", r).isEqualTo(201);
        exports.add(r.json().get("id").asString());
    }

    @Test
    void anUnauthenticatedHugeBodyIsRefusedBeforeItIsRead() throws IOException {
        for (String auth : new String[] {"", "Authorization: Bearer wrong-token-wrong-token\r\n"}) {
            String response = rawRequest("POST /v1/imports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + auth + "Content-Length: 1073741824\r\n\r\n{\"handle\":\"" + "A".repeat(1000));
            // Only 1 KiB of the announced 1 GiB was sent: the answer came without the body being read.
            assertThat(response).startsWith("HTTP/1.1 401");
            assertThat(response).contains("Content-Type: application/problem+json")
                    .contains("urn:imexprobe:problem:unauthorized");
        }
    }

    @Test
    void aSignedBodyOverTheLimitIsRefused() {
        String big = "{\"handle\":\"" + "A".repeat(20_000) + "\"}";
        String auth = new AgentSignature(AgentProcess.TOKEN, Clock.systemUTC()).sign("POST", "/v1/imports",
                big.getBytes(StandardCharsets.UTF_8));
        AgentProcess.Reply r = withoutDriverCall(() -> send("POST", "/v1/imports", big, auth));
        assertProblem(r, 401, "unauthorized", "request body larger than 16384 bytes");
    }

    @Test
    void aSignedBodyIsReadNoFurtherThanOneByteOverTheLimit() throws IOException {
        // 1 GiB announced, exactly 16,385 bytes sent, then the client waits: a server that read on for the rest
        // would never answer (rawRequest fails after 20 s); one that stops at limit + 1 answers at once.
        String sent = "{\"handle\":\"" + "A".repeat(16_385 - 13) + "\"}";
        assertThat(sent.getBytes(StandardCharsets.UTF_8)).hasSize(16_385);
        String auth = new AgentSignature(AgentProcess.TOKEN, Clock.systemUTC()).sign("POST", "/v1/imports",
                sent.getBytes(StandardCharsets.UTF_8));
        String response = rawRequest("POST /v1/imports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Authorization: " + auth + "\r\nContent-Length: 1073741824\r\n\r\n" + sent);
        assertThat(response).startsWith("HTTP/1.1 401").contains("urn:imexprobe:problem:unauthorized")
                .contains("larger than 16384 bytes");
    }

    /** Sends raw bytes and reads what comes back within 20 s (a server waiting for the rest of the body: none). */
    private static String rawRequest(String request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", agent.port())) {
            s.setSoTimeout(20_000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.UTF_8));
            out.flush();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try {
                return RawAnswers.readJsonAnswer(s.getInputStream(), got);
            } catch (SocketTimeoutException e) {
                throw new AssertionError("no answer while the body was incomplete; got: " + got, e);
            }
        }
    }

    @Test
    void readOnlyEndpointsNeedNoCredential() {
        assertThat(agent.get("/v1/node").status()).isEqualTo(200);
        assertThat(agent.get("/v1/mesh").status()).isEqualTo(200);
        assertThat(agent.get("/").status()).isEqualTo(200);
        assertThat(agent.get("/actuator/prometheus").status()).isEqualTo(200);
        assertThat(agent.get("/probe?target=" + peer.hostPort() + "&direction=push&gpu=0&peerGpu=0").json()
                .get("verdict").asString()).isEqualTo("pass");
    }

    /**
     * A probe's two connections (caller → exporter, exporter → importer) are kept alive: the agent must not close one
     * after a number of requests, which made one request in a hundred wait for a new TCP connection. A random count
     * past Tomcat's default limit of 100, all on one socket, none answered with {@code Connection: close}.
     */
    @Test
    void keptAliveConnectionServesEveryRequest() {
        int count = 101 + new Random().nextInt(200);
        List<RawHttp.Reply> replies = RawHttp.sendKeptAlive(agent.port(), RawHttp.Request.of("GET", "/v1/node"), count);
        assertThat(replies).as("answers on one connection before the agent closed it").hasSize(count);
        for (int i = 0; i < count; i++) {
            assertThat(replies.get(i).status()).as("answer %d of %d", i + 1, count).isEqualTo(200);
            assertThat(replies.get(i).header("connection")).as("answer %d of %d", i + 1, count).isNotEqualTo("close");
            assertThat(replies.get(i).body()).as("answer %d of %d", i + 1, count).isNotEmpty();
        }
    }

    // ---- validation ----------------------------------------------------------------------------------------------

    record Invalid(String name, String method, String path, String body, int status, String code, String detail) {
        @Override
        public String toString() {
            return method + " " + path + ": " + name;
        }
    }

    private static String imp(String fields) {
        return "{\"handle\":\"" + randomHandle() + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":" + MIB2 + fields + "}";
    }

    private static String handleOf(int bytes) {
        return Base64.getEncoder().encodeToString(new byte[bytes]);
    }

    static Stream<Invalid> invalidInputs() {
        String i = "/v1/imports";
        String e = "/v1/exports";
        return Stream.of(
                // POST /v1/imports
                new Invalid("bad base64", "POST", i, "{\"handle\":\"!!notbase64!!\",\"handleType\":\"FABRIC\",\"sizeBytes\":"
                        + MIB2 + "}", 400, "invalid-input", "handle is not valid base64: Illegal base64 character 21"),
                new Invalid("63-byte handle", "POST", i, "{\"handle\":\"" + handleOf(63) + "\",\"handleType\":\"FABRIC\","
                        + "\"sizeBytes\":" + MIB2 + "}", 400, "invalid-input", "a FABRIC handle is exactly 64 bytes, got 63"),
                new Invalid("65-byte handle", "POST", i, "{\"handle\":\"" + handleOf(65) + "\",\"handleType\":\"FABRIC\","
                        + "\"sizeBytes\":" + MIB2 + "}", 400, "invalid-input", "a FABRIC handle is exactly 64 bytes, got 65"),
                new Invalid("missing handle", "POST", i, "{\"handleType\":\"FABRIC\",\"sizeBytes\":" + MIB2 + "}", 400,
                        "invalid-input", "handle is required: the 64-byte FABRIC handle as base64"),
                new Invalid("size not a multiple of the granularity", "POST", i,
                        imp("").replace("\"sizeBytes\":" + MIB2, "\"sizeBytes\":3145728"), 400, "invalid-input",
                        "sizeBytes: 3145728 bytes is not a multiple of GPU 0's allocation granularity "
                                + "(2097152 bytes)"),
                new Invalid("size over the cap", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2,
                        "\"sizeBytes\":2147483648"), 413, "over-cap", "sizeBytes 2147483648 is over this agent's cap of "
                        + "1073741824 bytes (imexprobe.exports.maxbytes)"),
                new Invalid("negative size", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2, "\"sizeBytes\":-2097152"),
                        400, "invalid-input", "sizeBytes must be positive, got -2097152"),
                new Invalid("zero size", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2, "\"sizeBytes\":0"),
                        400, "invalid-input", "sizeBytes must be positive, got 0"),
                new Invalid("size beyond 64 bits", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2,
                        "\"sizeBytes\":99999999999999999999999"), 400, "invalid-input",
                        "sizeBytes must be a whole number within 64 bits (a JSON number or a decimal string)"),
                new Invalid("size 2^62", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2,
                        "\"sizeBytes\":4611686018427387904"), 413, "over-cap", "sizeBytes 4611686018427387904 is over "
                        + "this agent's cap of 1073741824 bytes (imexprobe.exports.maxbytes)"),
                new Invalid("fractional size", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2,
                        "\"sizeBytes\":2097152.5"), 400, "invalid-input",
                        "sizeBytes must be a whole number within 64 bits (a JSON number or a decimal string)"),
                new Invalid("missing size", "POST", i, "{\"handle\":\"" + randomHandle() + "\",\"handleType\":\"FABRIC\"}",
                        400, "invalid-input", "sizeBytes is required: the size the exporter allocated"),
                new Invalid("unknown handleType", "POST", i, imp("").replace("FABRIC", "OPAQUE_WIN32"), 400,
                        "invalid-input", "handleType must be FABRIC (only fabric handles travel over HTTP), got 'OPAQUE_WIN32'"),
                new Invalid("POSIX_FD over HTTP", "POST", i, imp("").replace("FABRIC", "POSIX_FD"), 400, "invalid-input",
                        "handleType must be FABRIC (only fabric handles travel over HTTP), got 'POSIX_FD'"),
                new Invalid("missing handleType", "POST", i, "{\"handle\":\"" + randomHandle() + "\",\"sizeBytes\":"
                        + MIB2 + "}", 400, "invalid-input", "handleType is required: FABRIC"),
                new Invalid("unknown field", "POST", i, imp(",\"colour\":\"blue\""), 400, "invalid-input",
                        "unknown field 'colour' (known: exporterGpu, exporterNode, gpu, handle, handleType, seed, sizeBytes, writebackSeed)"),
                new Invalid("handle of the wrong JSON type", "POST", i, "{\"handle\":64,\"handleType\":\"FABRIC\","
                        + "\"sizeBytes\":" + MIB2 + "}", 400, "invalid-input", "handle must be a string"),
                new Invalid("size of the wrong JSON type", "POST", i, imp("").replace("\"sizeBytes\":" + MIB2,
                        "\"sizeBytes\":\"lots\""), 400, "invalid-input",
                        "sizeBytes must be a whole number within 64 bits (a JSON number or a decimal string)"),
                new Invalid("seed of the wrong JSON type", "POST", i, imp(",\"seed\":[1]"), 400, "invalid-input",
                        "seed must be a whole number within 64 bits (a JSON number or a decimal string)"),
                new Invalid("unknown gpu", "POST", i, imp(",\"gpu\":7"), 400, "invalid-input",
                        "no GPU '7' on this agent (node-api) (it has [0=" + gpu0 + ", 1=" + gpu1 + "])"),
                new Invalid("gpu of the wrong JSON type", "POST", i, imp(",\"gpu\":true"), 400, "invalid-input",
                        "gpu must be a GPU index or UUID"),
                new Invalid("writebackSeed without seed", "POST", i, imp(",\"writebackSeed\":5"), 400, "invalid-input",
                        "writebackSeed needs seed: write-back is only checked after a verified read"),
                new Invalid("a JSON array", "POST", i, "[1,2]", 400, "invalid-input", "request body must be a JSON object"),
                new Invalid("not JSON", "POST", i, "{handle:", 400, "invalid-input", "request body is not valid JSON: …"),
                new Invalid("a body over 16 KiB", "POST", i, imp(",\"exporterNode\":\"" + "n".repeat(17_000) + "\""), 400,
                        "invalid-input", "request body of 17…"),
                // POST /v1/exports
                new Invalid("POSIX_FD over HTTP", "POST", e, "{\"handleType\":\"POSIX_FD\"}", 400, "invalid-input",
                        "handleType must be FABRIC (POSIX_FD handles cannot travel over HTTP; the ladder uses them on one "
                                + "host), got 'POSIX_FD'"),
                new Invalid("size over the cap", "POST", e, "{\"sizeBytes\":1075838976}", 413, "over-cap",
                        "sizeBytes 1075838976 is over this agent's cap of 1073741824 bytes (imexprobe.exports.maxbytes)"),
                new Invalid("size not a multiple of the granularity", "POST", e, "{\"sizeBytes\":1000}", 400,
                        "invalid-input", "sizeBytes: 1000 bytes is not a multiple of GPU 0's allocation granularity "
                                + "(2097152 bytes)"),
                new Invalid("size as a decimal string, negative", "POST", e, "{\"sizeBytes\":\"-4194304\"}", 400,
                        "invalid-input", "sizeBytes must be positive, got -4194304"),
                new Invalid("unknown gpu UUID", "POST", e, "{\"gpu\":\"GPU-00000000-0000-0000-0000-000000000000\"}", 400,
                        "invalid-input", "no GPU 'GPU-00000000-0000-0000-0000-000000000000' on this agent (node-api) (it "
                                + "has [0=" + gpu0 + ", 1=" + gpu1 + "])"),
                new Invalid("unknown field", "POST", e, "{\"handle\":\"AAAA\"}", 400, "invalid-input",
                        "unknown field 'handle' (known: gpu, handleType, seed, sizeBytes)"),
                new Invalid("seed not a number", "POST", e, "{\"seed\":\"abc\"}", 400, "invalid-input",
                        "seed must be a whole number within 64 bits (a JSON number or a decimal string)"),
                // verify and delete
                new Invalid("verify without seed", "POST", e + "/no-such-export/verify", "{}", 400, "invalid-input",
                        "seed is required: the seed of the pattern the importer wrote"),
                new Invalid("verify of an unknown export", "POST", e + "/no-such-export/verify", "{\"seed\":1}", 404,
                        "unknown-export", "no export no-such-export on this agent: it was never made here, was deleted, "
                                + "or expired (exports live imexprobe.exports.ttl)"),
                new Invalid("delete of an unknown export", "DELETE", e + "/no-such-export", null, 404, "unknown-export",
                        "no export no-such-export on this agent: it was never made here, was deleted, or expired "
                                + "(exports live imexprobe.exports.ttl)"),
                // GET /probe
                new Invalid("no target", "GET", "/probe", null, 400, "invalid-input",
                        "target is required: host:port of another imexprobe agent ([v6]:port for IPv6)"),
                new Invalid("target without port", "GET", "/probe?target=agent-7", null, 400, "invalid-input",
                        "target must be host:port (IPv6 in brackets: [fd00::1]:8080), got 'agent-7'"),
                new Invalid("target port 0", "GET", "/probe?target=agent-7:0", null, 400, "invalid-input",
                        "target must be host:port (IPv6 in brackets: [fd00::1]:8080), got 'agent-7:0'"),
                new Invalid("target port 65536", "GET", "/probe?target=agent-7:65536", null, 400, "invalid-input",
                        "target must be host:port (IPv6 in brackets: [fd00::1]:8080), got 'agent-7:65536'"),
                new Invalid("target with a path", "GET", "/probe?target=agent-7:8080/admin", null, 400, "invalid-input",
                        "target must be host:port (IPv6 in brackets: [fd00::1]:8080), got 'agent-7:8080/admin'"),
                new Invalid("target IPv6 without brackets", "GET", "/probe?target=fd00::1:8080", null, 400,
                        "invalid-input", "target must be host:port (IPv6 in brackets: [fd00::1]:8080), got 'fd00::1:8080'"),
                new Invalid("bad direction", "GET", "/probe?target=agent-7:8080&direction=sideways", null, 400,
                        "invalid-input", "direction must be push, pull or both, got 'sideways'"),
                new Invalid("bad direction, IPv6 target in raw brackets", "GET",
                        "/probe?target=[fd00::1]:8080&direction=sideways", null, 400,
                        "invalid-input", "direction must be push, pull or both, got 'sideways'"),
                new Invalid("bad format", "GET", "/probe?target=agent-7:8080&format=xml", null, 400, "invalid-input",
                        "format must be json or prometheus, got 'xml'"),
                new Invalid("bad writeback", "GET", "/probe?target=agent-7:8080&writeback=maybe", null, 400,
                        "invalid-input", "writeback must be true or false, got 'maybe'"),
                new Invalid("bad debug", "GET", "/probe?target=agent-7:8080&debug=2", null, 400, "invalid-input",
                        "debug must be true or false, got '2'"),
                new Invalid("negative size", "GET", "/probe?target=agent-7:8080&sizeBytes=-5", null, 400,
                        "invalid-input", "sizeBytes must be a positive whole number, got '-5'"),
                new Invalid("size not a number", "GET", "/probe?target=agent-7:8080&sizeBytes=2MiB", null, 400,
                        "invalid-input", "sizeBytes must be a positive whole number, got '2MiB'"),
                new Invalid("size not a multiple of the granularity", "GET", "/probe?target=agent-7:8080&sizeBytes=3",
                        null, 400, "invalid-input", "sizeBytes: 3 bytes is not a multiple of GPU 0's allocation "
                                + "granularity (2097152 bytes)"),
                new Invalid("size over the cap", "GET", "/probe?target=agent-7:8080&sizeBytes=99999999999", null, 413,
                        "over-cap", "sizeBytes 99999999999 is over this agent's cap of 1073741824 bytes "
                                + "(imexprobe.exports.maxbytes)"),
                new Invalid("unknown gpu", "GET", "/probe?target=agent-7:8080&gpu=9", null, 400, "invalid-input",
                        "no GPU '9' on this agent (node-api) (it has [0=" + gpu0 + ", 1=" + gpu1 + "])"),
                new Invalid("a parameter differing in case", "GET", "/probe?target=agent-7:8080&writeBack=false", null,
                        400, "invalid-input", "unknown query parameter 'writeBack' (names are case-sensitive: did you "
                                + "mean 'writeback'?); /probe takes " + PROBE_TAKES + ". Nothing was run."),
                new Invalid("an unknown parameter, Prometheus text asked for", "GET",
                        "/probe?target=agent-7:8080&format=prometheus&modules=imex", null, 400, "invalid-input",
                        "unknown query parameter 'modules'; /probe takes " + PROBE_TAKES + ". Nothing was run."),
                // the others
                new Invalid("bad scope", "GET", "/v1/mesh?scope=world", null, 400, "invalid-input",
                        "scope must be agent or domain, got 'world'"),
                new Invalid("across neither true nor false", "GET", "/v1/mesh?across=some", null, 400, "invalid-input",
                        "across must be true or false, got 'some'"),
                new Invalid("a misspelt refresh", "GET", "/v1/node?refesh=true", null, 400, "invalid-input",
                        "unknown query parameter 'refesh'; /v1/node takes refresh. Nothing was run."),
                new Invalid("a parameter the page does not take", "GET", "/?scope=domain", null, 400, "invalid-input",
                        "unknown query parameter 'scope'; / takes no query parameters. Nothing was run."));
    }

    private static final String PROBE_TAKES = "target, direction, gpu, peerGpu, sizeBytes, writeback, debug, format, "
            + "timeout, module";

    /**
     * Refusals worded by Spring, not by us: the status, the problem type and that the detail names what was wrong
     * are ours to promise; Spring's exact sentence is not (it changes between releases).
     */
    static Stream<Invalid> frameworkWordedRefusals() {
        return Stream.of(
                new Invalid("bad refresh", "GET", "/v1/node?refresh=maybe", null, 400, "invalid-input", "maybe"),
                new Invalid("unknown path", "GET", "/v2/node", null, 404, "not-found", "v2/node"),
                new Invalid("wrong method", "PUT", "/v1/node", "{}", 405, "method-not-allowed", "PUT"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("frameworkWordedRefusals")
    void eachRefusalWordedBySpringIsAProblemNamingTheInput(Invalid c) {
        AgentProcess.Reply r = withoutDriverCall(() -> send(c.method(), c.path(), c.body(),
                c.method().equals("GET") ? null : "Bearer " + AgentProcess.TOKEN));
        assertThat(r.status()).as("%s", r).isEqualTo(c.status());
        assertThat(r.contentType()).as("%s", r).startsWith("application/problem+json");
        JsonNode p = r.json();
        assertThat(p.get("type").asString()).isEqualTo(PROBLEM + c.code());
        assertThat(p.get("status").asInt()).isEqualTo(c.status());
        assertThat(p.get("detail").asString()).as("the detail names the input").contains(c.detail());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidInputs")
    void eachInvalidInputIsRefusedWithAProblemNamingItAndNoDriverCall(Invalid c) {
        AgentProcess.Reply r = withoutDriverCall(() -> send(c.method(), c.path(), c.body(),
                c.method().equals("GET") ? null : "Bearer " + AgentProcess.TOKEN));
        assertProblem(r, c.status(), c.code(), c.detail());
    }

    /**
     * /probe and /v1/imports are answered by {@link DirectRoutes} without MVC's dispatch; an Accept header it does
     * not take sends the same request on to MVC. Both must give the same status and the same document, and the
     * plain request must really have taken the direct route (it answers with a Content-Length; MVC here chunks).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("directlyRouted")
    void directRoutesAnswerExactlyAsMvc(Invalid c) {
        String auth = c.method().equals("GET") ? null : "Bearer " + AgentProcess.TOKEN;
        AgentProcess.Reply direct = send(c.method(), c.path(), c.body(), auth, null);
        AgentProcess.Reply mvc = send(c.method(), c.path(), c.body(), auth, "application/json, */*;q=0.5");
        assertProblem(direct, c.status(), c.code(), c.detail());
        assertThat(direct.status()).isEqualTo(mvc.status());
        assertThat(direct.json()).as("direct %s vs MVC %s", direct, mvc).isEqualTo(mvc.json());
        assertThat(direct.header("Content-Length")).as("served by DirectRoutes: %s", direct).isPresent();
        assertThat(mvc.header("Content-Length")).as("served by MVC: %s", mvc).isEmpty();
    }

    static Stream<Invalid> directlyRouted() {
        return invalidInputs().filter(c -> c.path().startsWith("/probe") || c.path().equals("/v1/imports"))
                .filter(c -> !c.path().contains("format=") && (c.method().equals("GET") ? c.body() == null
                        : c.body() != null && !c.body().isEmpty() && c.body().length() <= 16 * 1024));
    }

    /**
     * /probe and /v1/imports are timed by RouteTimer, not by Spring's observation: each request counted once, under
     * the same metric and the same label names as a route the observation times (/v1/node), the route named as MVC
     * names it, the status and outcome its own. An import refused for its credential is counted too, once, under its
     * route (RouteTimer comes before the import's auth filter, which names the route it refused); so are the other
     * guarded routes' 401s, which Spring's observation times (MVC never sees them, and would leave them UNKNOWN).
     */
    @Test
    void theProbesTwoRoutesAreTimedOnceWithTheLabelsOfEveryOtherRoute() {
        assertThat(agent.get("/v1/node").status()).isEqualTo(200);
        String before = agent.get("/actuator/prometheus").body();
        int refused = 2 + new Random().nextInt(4);
        for (int i = 0; i < refused; i++) {
            assertThat(agent.get("/probe").status()).isEqualTo(400);
        }
        int strangers = 1 + new Random().nextInt(3);
        for (int i = 0; i < strangers; i++) {
            assertThat(agent.post("/v1/imports", importBody(), null).status()).isEqualTo(401);
        }
        Map<String, Integer> refusedElsewhere = new LinkedHashMap<>();
        for (String route : List.of("/v1/exports", "/v1/exports/{id}/verify", "/v1/ladder")) {
            int n = 1 + new Random().nextInt(3);
            refusedElsewhere.put(route, n);
            for (int i = 0; i < n; i++) {
                String path = route.replace("{id}", UUID.randomUUID().toString());
                assertThat(agent.post(path, "{}", "Bearer not-the-token-" + i).status()).as(path).isEqualTo(401);
            }
        }
        // The other agent exports and this one imports: the import is this agent's to count.
        AgentProcess.Reply probed = peer.get("/probe?target=" + agent.hostPort()
                + "&direction=push&writeback=false&gpu=0&peerGpu=1");
        assertThat(probed.json().get("verdict").asString()).as("%s", probed).isEqualTo("pass");
        String after = agent.get("/actuator/prometheus").body();

        Map<String, String> node = requestsCount(after, Map.of("uri", "/v1/node", "status", "200"));
        Map<String, String> badProbe = requestsCount(after, Map.of("uri", "/probe", "status", "400"));
        Map<String, String> imported = requestsCount(after, Map.of("uri", "/v1/imports", "status", "200"));
        assertThat(badProbe.keySet()).as("the observation's label names").isEqualTo(node.keySet());
        assertThat(imported.keySet()).isEqualTo(node.keySet());
        assertThat(badProbe).containsEntry("method", "GET").containsEntry("outcome", "CLIENT_ERROR")
                .containsEntry("exception", "none").containsEntry("error", "none");
        assertThat(imported).containsEntry("method", "POST").containsEntry("outcome", "SUCCESS");
        assertThat(count(badProbe) - count(requestsCountOrNone(before, Map.of("uri", "/probe", "status", "400"))))
                .as("each refused /probe counted under its route").isEqualTo(refused);
        assertThat(count(imported) - count(requestsCountOrNone(before, Map.of("uri", "/v1/imports", "status", "200"))))
                .as("the probe's one import counted under its route").isEqualTo(1);
        // Once, not also by the observation under another series (uri UNKNOWN): the sums over every series.
        assertThat(sum(after, "status=\"400\"") - sum(before, "status=\"400\"")).isEqualTo(refused);
        Map<String, String> strangersCount = Map.of("uri", "/v1/imports", "status", "401");
        assertThat(count(requestsCount(after, strangersCount)) - count(requestsCountOrNone(before, strangersCount)))
                .as("each stranger's import counted under its route").isEqualTo(strangers);
        int elsewhere = 0;
        for (Map.Entry<String, Integer> e : refusedElsewhere.entrySet()) {
            Map<String, String> labels = Map.of("uri", e.getKey(), "status", "401", "method", "POST");
            assertThat(count(requestsCount(after, labels)) - count(requestsCountOrNone(before, labels)))
                    .as("401s on %s", e.getKey()).isEqualTo(e.getValue().longValue());
            elsewhere += e.getValue();
        }
        assertThat(sum(after, "status=\"401\"") - sum(before, "status=\"401\""))
                .isEqualTo(strangers + elsewhere);
        assertThat(sum(after, "uri=\"UNKNOWN\"") - sum(before, "uri=\"UNKNOWN\"")).isZero();
        assertThat(sum(after, "method=\"POST\"") - sum(before, "method=\"POST\""))
                .isEqualTo(1 + strangers + elsewhere);
    }

    private static long sum(String scrape, String label) {
        return scrape.lines().filter(l -> l.startsWith("http_server_requests_seconds_count{") && l.contains(label))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf('}') + 1).trim())).sum();
    }

    /** The labels of the http_server_requests_seconds_count line with these labels, and its value under "=". */
    private static Map<String, String> requestsCount(String scrape, Map<String, String> labels) {
        Map<String, String> found = requestsCountOrNone(scrape, labels);
        assertThat(found).as("a count line with %s in%n%s", labels, scrape).isNotNull();
        return found;
    }

    private static Map<String, String> requestsCountOrNone(String scrape, Map<String, String> labels) {
        for (String line : scrape.split("\n")) {
            if (!line.startsWith("http_server_requests_seconds_count{")) {
                continue;
            }
            Map<String, String> parsed = new LinkedHashMap<>();
            String inside = line.substring(line.indexOf('{') + 1, line.lastIndexOf('}'));
            for (String pair : inside.split(",(?=[a-z_]+=\")")) {
                int eq = pair.indexOf('=');
                parsed.put(pair.substring(0, eq), pair.substring(eq + 2, pair.length() - 1));
            }
            if (parsed.entrySet().containsAll(labels.entrySet())) {
                parsed.put("=", line.substring(line.lastIndexOf('}') + 1).trim());
                return parsed;
            }
        }
        return null;
    }

    private static long count(Map<String, String> line) {
        return line == null ? 0 : (long) Double.parseDouble(line.get("="));
    }

    @Test
    void anUnknownPeerGpuIsTheCallersMistakeToo() {
        AgentProcess.Reply r = agent.get("/probe?target=" + peer.hostPort() + "&peerGpu=GPU-nope");
        assertProblem(r, 400, "invalid-input", "no GPU 'GPU-nope' on the target (node-api-peer) (it has [0=" + gpu0
                + ", 1=" + gpu1 + "])");
    }

    /**
     * A probe of this agent by itself, under any address that reaches it, is refused before any driver call: its
     * import would run in the exporting process, where it passes even when other processes' imports fail.
     */
    @Test
    void aProbeOfTheAgentItselfIsTheCallersMistake() {
        String agentId = agent.get("/v1/node").json().get("agent").get("id").asString();
        // The test's agents listen on 127.0.0.1 only: the names that reach it there.
        List<String> addresses = new ArrayList<>(List.of(agent.hostPort(), "localhost:" + agent.port(),
                "LocalHost:" + agent.port()));
        Collections.shuffle(addresses);
        for (String target : addresses) {
            String query = "/probe?target=" + target + "&direction=" + List.of("push", "pull", "both").get(
                    new Random().nextInt(3)) + (new Random().nextBoolean() ? "&format=prometheus" : "");
            AgentProcess.Reply r = withoutDriverCall(() -> agent.get(query));
            assertProblem(r, 400, "invalid-input", "target " + target + " is this agent itself (node-api, agent "
                    + agentId + "): a probe must import in another process, since an import into the exporting "
                    + "process passes even where other processes' imports fail; name another agent, or run "
                    + "'imexprobe check' for this node's own self-probe");
        }
        assertThat(agent.get("/probe?target=" + peer.hostPort() + "&direction=push").json().get("verdict").asString())
                .as("another agent on the same machine is probed").isEqualTo("pass");
    }

    // ---- the flow by hand ----------------------------------------------------------------------------------------

    @Test
    void exportImportVerifyAndDeleteByHand() {
        long seed = 0x7fff_0000_1234_5678L;
        AgentProcess.Reply created = agent.post("/v1/exports", Map.of("gpu", gpu1, "sizeBytes", 2 * MIB2,
                "handleType", "FABRIC", "seed", Long.toString(seed)));
        assertThat(created.status()).as("%s", created).isEqualTo(201);
        JsonNode ex = created.json();
        String id = ex.get("id").asString();
        exports.add(id);
        assertThat(Base64.getDecoder().decode(ex.get("handle").asString())).hasSize(64);
        assertThat(ex.get("handleType").asString()).isEqualTo("FABRIC");
        assertThat(ex.get("sizeBytes").asLong()).isEqualTo(2 * MIB2);
        assertThat(ex.get("verdict").asString()).isEqualTo("pass");
        assertThat(ex.get("exporter").get("node").asString()).isEqualTo("node-api");
        assertThat(ex.get("exporter").get("gpuUuid").asString()).isEqualTo(gpu1);
        assertThat(ex.get("exporter").get("gpuIndex").asInt()).isEqualTo(1);
        assertThat(Instant.parse(ex.get("expiresAt").asString())).isAfter(Instant.now());
        assertThat(ex.get("stages").valueStream().map(s -> s.get("name").asString() + ":" + s.get("status").asString()))
                .containsExactly("create:ok", "export:ok");
        assertThat(machine.stateFiles()).hasSize(1);

        // Import on the other GPU of the same agent, with the seed: read back, then write the write-back pattern.
        long writeback = -42;
        Map<String, Object> imp = new LinkedHashMap<>();
        imp.put("handle", ex.get("handle").asString());
        imp.put("handleType", "FABRIC");
        imp.put("sizeBytes", 2 * MIB2);
        imp.put("gpu", 0);
        imp.put("seed", Long.toString(seed));
        imp.put("writebackSeed", writeback);
        JsonNode in = agent.post("/v1/imports", imp).json();
        assertThat(in.get("verdict").asString()).as("%s", in).isEqualTo("pass");
        assertThat(in.get("node").asString()).isEqualTo("node-api");
        assertThat(in.get("gpu").asInt()).isZero();
        assertThat(in.get("gpuUuid").asString()).isEqualTo(gpu0);
        assertThat(in.has("finding")).isFalse();
        assertThat(in.get("stages").valueStream().map(s -> s.get("name").asString() + ":" + s.get("status").asString()))
                .containsExactly("import:ok", "reserve:ok", "map:ok", "access:ok", "verify:ok", "writeback:ok",
                        "release:ok");
        assertThat(in.toString()).as("never the memory's contents").doesNotContain(ex.get("handle").asString());

        JsonNode right = agent.post("/v1/exports/" + id + "/verify", Map.of("seed", writeback)).json().get("stage");
        assertThat(right.get("name").asString()).isEqualTo("writeback");
        assertThat(right.get("status").asString()).isEqualTo("ok");
        assertThat(right.get("detail").asString()).isEqualTo("the exporter sees the importer's write-back pattern");
        JsonNode wrong = agent.post("/v1/exports/" + id + "/verify", Map.of("seed", seed)).json().get("stage");
        assertThat(wrong.get("status").asString()).isEqualTo("failed");
        assertThat(wrong.get("cuResult").asInt()).isZero();
        assertThat(wrong.get("detail").asString()).isEqualTo("write-back mismatch at byte 0: the importer's writes did "
                + "not reach the exporter's memory");

        AgentProcess.Reply deleted = agent.delete("/v1/exports/" + id);
        assertThat(deleted.status()).isEqualTo(200);
        assertThat(deleted.json().get("stage").get("name").asString()).isEqualTo("release");
        assertThat(deleted.json().get("stage").get("status").asString()).isEqualTo("ok");
        assertThat(machine.stateFiles()).isEmpty();
        assertThat(agent.delete("/v1/exports/" + id).status()).as("deleted once").isEqualTo(404);
        exports.remove(id);
    }

    @Test
    void anImportWithoutSeedChecksImportMapAndAccessAndSaysVerifyWasSkipped() {
        JsonNode ex = agent.post("/v1/exports", "{}").json();
        exports.add(ex.get("id").asString());
        JsonNode in = agent.post("/v1/imports", Map.of("handle", ex.get("handle").asString(), "handleType", "FABRIC",
                "sizeBytes", MIB2)).json();
        assertThat(in.get("verdict").asString()).isEqualTo("pass");
        JsonNode verify = in.get("stages").get(4);
        assertThat(verify.get("name").asString()).isEqualTo("verify");
        assertThat(verify.get("status").asString()).isEqualTo("skipped");
        assertThat(verify.get("detail").asString()).isEqualTo("no seed: the handle was exported by another program, "
                + "so its contents are unknown; import, map and access were checked");
        assertThat(in.get("stages").get(5).get("detail").asString()).isEqualTo("write-back not requested");
    }

    @Test
    void aGarbageHandleIsAResultNotAnError() {
        JsonNode in = agent.post("/v1/imports", importBody()).json();
        assertThat(in.get("verdict").asString()).isEqualTo("fail");
        assertThat(in.get("stages").get(0).get("cuResult").asInt()).isEqualTo(801);
        assertThat(in.get("finding").get("code").asString()).isEqualTo("HANDLE_REJECTED");
    }

    @Test
    void aDriverRefusalAtExportIs200WithTheFindingAndTheCountCapIs429() {
        agent.faults("cuMemCreate=800");
        AgentProcess.Reply refused = agent.post("/v1/exports", "{}");
        assertThat(refused.status()).as("a driver failure is a result").isEqualTo(200);
        assertThat(refused.json().get("verdict").asString()).isEqualTo("fail");
        assertThat(refused.json().has("id")).isFalse();
        assertThat(refused.json().get("finding").get("code").asString()).isEqualTo("CREATE_NOT_PERMITTED");
        // the exporter names itself; who would import it does not know, so it says nothing of that side
        JsonNode evidence = refused.json().get("finding").get("evidence");
        assertThat(evidence.path("sourceNode").asString()).isEqualTo("node-api");
        assertThat(evidence.has("targetNode")).as(evidence.toString()).isFalse();
        assertThat(evidence.has("sameNode")).as(evidence.toString()).isFalse();
        agent.clearFaults();

        for (int n = 0; n < 3; n++) {
            AgentProcess.Reply r = agent.post("/v1/exports", "{}");
            assertThat(r.status()).isEqualTo(201);
            exports.add(r.json().get("id").asString());
        }
        AgentProcess.Reply fourth = withoutDriverCall(() -> agent.post("/v1/exports", "{}"));
        assertProblem(fourth, 429, "over-cap", "this agent already holds 3 exports, the most it allows; retry after "
                + "some expire (TTL 60 s)");
    }
}
