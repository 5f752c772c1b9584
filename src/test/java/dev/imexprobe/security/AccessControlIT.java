package dev.imexprobe.security;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.RawAnswers;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Who may make an agent allocate, import or spawn, and how much. Three agents on one fake machine:
 * <ul>
 * <li>{@code untokened}: no token configured, defaults otherwise: it refuses exports, imports and the ladder to
 * everyone, before any driver call;</li>
 * <li>{@code open}: no token and imexprobe.auth.required=false (a trusted lab network), the ladder enabled: exports
 * and imports are served to anyone, the ladder still to no one;</li>
 * <li>{@code capped}: the token, small caps (3 exports, 4 MiB each, 8 MiB in all) and a 5 s TTL: every cap is a
 * 413 (a size over the cap) or 429 (the agent full) before any driver call, also under 24 concurrent requests, and the TTL releases what nobody deletes.</li>
 * </ul>
 * AgentApiIT already proves 401 without or with a wrong credential, before the body is read and without a driver
 * call, on every guarded path and its odd spellings; this class adds what a missing token and the caps change.
 */
class AccessControlIT {

    static final long MIB2 = 2L << 20;

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess untokened;
    static AgentProcess open;
    static AgentProcess capped;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        // The context linger outlasts the class: its release, a driver call of a timer thread 2 s (the default)
        // after the last allocation, would trip the driver-call detector of whichever test runs at that moment.
        untokened = AgentProcess.start("untokened", dir, machine.env(), "node-u", Map.of("IMEXPROBE_AUTH_TOKEN", "",
                "IMEXPROBE_DRIVER_CONTEXTLINGER", "1h"));
        open = AgentProcess.start("open", dir, machine.env(), "node-o", Map.of("IMEXPROBE_AUTH_TOKEN", "",
                "IMEXPROBE_AUTH_REQUIRED", "false", "IMEXPROBE_LADDER_ENABLED", "true",
                "IMEXPROBE_DRIVER_CONTEXTLINGER", "1h"));
        capped = AgentProcess.start("capped", dir, machine.env(), "node-c", Map.of("IMEXPROBE_EXPORTS_MAX", "3",
                "IMEXPROBE_EXPORTS_MAXBYTES", Long.toString(2 * MIB2), "IMEXPROBE_EXPORTS_TOTALBYTES",
                Long.toString(4 * MIB2), "IMEXPROBE_EXPORTS_TTL", "5s", "IMEXPROBE_DRIVER_CONTEXTLINGER", "1h"));
        AgentProcess.awaitReady(untokened, open, capped);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(untokened, open, capped);
    }

    @AfterEach
    void nothingIsLeftBehind() {
        for (AgentProcess a : new AgentProcess[] {untokened, open, capped}) {
            a.clearFaults();
        }
        // The capped agent's exports expire within 5 s; the others' are deleted by the tests.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).as("allocation files of the fake").isEmpty();
            for (AgentProcess a : new AgentProcess[] {untokened, open, capped}) {
                assertThat(a.liveAllocations()).as("imexprobe_allocations_live of %s", a.name()).isZero();
            }
        });
    }

    private static String garbageImport() {
        return "{\"handle\":\"" + java.util.Base64.getEncoder().encodeToString(new byte[64])
                + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":" + MIB2 + "}";
    }

    /** Runs a request that must not reach the driver and proves it did not (see AgentProcess#faultsWithCallMarker). */
    private static AgentProcess.Reply withoutDriverCall(AgentProcess agent, Supplier<AgentProcess.Reply> request) {
        String marker = agent.faultsWithCallMarker("");
        AgentProcess.Reply reply = request.get();
        assertThat(agent.driverCalledSince(marker)).as("a driver call was made for %s", reply).isFalse();
        // The detector works on this agent: its own self-check of the node calls the driver.
        agent.get("/v1/node?refresh=true");
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.driverCalledSince(marker));
        agent.clearFaults();
        return reply;
    }

    private static void assertProblem(AgentProcess.Reply r, int status, String type, String detailStart) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("type").asString()).isEqualTo("urn:imexprobe:problem:" + type);
        assertThat(r.json().get("detail").asString()).startsWith(detailStart);
    }

    // ---- no token ---------------------------------------------------------------------------------------------

    @Test
    void withoutATokenTheDefaultRefusesExportsImportsAndTheLadderToEveryoneBeforeAnyDriverCall() {
        String why = "this agent has no shared token, so it accepts no export or import requests";
        List<Supplier<AgentProcess.Reply>> requests = List.of(
                () -> untokened.post("/v1/exports", "{}", null),
                () -> untokened.post("/v1/exports", "{}", "Bearer anything-at-all-0123456789"),
                () -> untokened.post("/v1/imports", garbageImport(), null),
                () -> untokened.post("/v1/imports", garbageImport(), "Bearer " + AgentProcess.TOKEN),
                () -> untokened.post("/v1/exports/x/verify", "{\"seed\":1}", null),
                () -> untokened.send(java.net.http.HttpRequest.newBuilder(untokened.uri("/v1/exports/x")).DELETE(),
                        Duration.ofSeconds(30)));
        for (Supplier<AgentProcess.Reply> request : requests) {
            AgentProcess.Reply r = withoutDriverCall(untokened, request);
            assertProblem(r, 401, "unauthorized", why);
        }
        assertProblem(untokened.post("/v1/ladder", "{}", "Bearer " + AgentProcess.TOKEN), 401, "unauthorized",
                "this agent has no shared token, and the ladder (it starts processes) is served to token holders only");
        // What needs no credential is served as ever.
        assertThat(untokened.get("/v1/node").status()).isEqualTo(200);
        assertThat(untokened.get("/actuator/health/readiness").status()).isEqualTo(200);
        System.out.printf("AccessControlIT: without a token, %d export/import requests refused with 401 and no "
                + "driver call; the ladder refused too%n", requests.size());
    }

    @Test
    void authNotRequiredServesExportsAndImportsToAnyoneButNeverTheLadder() {
        AgentProcess.Reply created = open.post("/v1/exports", "{\"seed\":\"7\"}", null);
        assertThat(created.status()).as("%s", created).isEqualTo(201);
        String id = created.json().get("id").asString();
        AgentProcess.Reply imported = open.post("/v1/imports", "{\"handle\":\"" + created.json().get("handle").asString()
                + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":" + MIB2 + ",\"seed\":\"7\"}", null);
        assertThat(imported.json().get("verdict").asString()).as("%s", imported).isEqualTo("pass");
        assertThat(open.send(java.net.http.HttpRequest.newBuilder(open.uri("/v1/exports/" + id)).DELETE(),
                Duration.ofSeconds(30)).status()).isEqualTo(200);

        AgentProcess.Reply ladder = withoutDriverCall(open, () -> open.post("/v1/ladder", "{}", null));
        assertProblem(ladder, 401, "unauthorized", "this agent has no shared token, and the ladder");
    }

    /**
     * An agent without a token sends its requests unsigned. A peer that requires a token refuses them, and the
     * finding is the agent's own (NO_AUTH_TOKEN, its side of the pair), not the peer's; the peer's probes into it are
     * refused there and named so (PEER_REJECTED). A peer that requires none takes them. Each agent without a token
     * said so once at the start.
     */
    @Test
    void anAgentWithoutATokenIsToldSoAndBlamesItselfNotItsPeers() {
        JsonNode out = untokened.get("/probe?target=" + capped.hostPort() + "&direction=both").json();
        assertThat(out.get("results")).hasSize(2);
        for (JsonNode r : out.get("results")) {
            JsonNode f = r.get("finding");
            boolean push = r.get("direction").asString().equals("push");
            assertThat(r.get("verdict").asString()).isEqualTo("fail");
            assertThat(f.get("code").asString()).as("%s", r).isEqualTo("NO_AUTH_TOKEN");
            assertThat(f.get("blame").asString()).as("this agent's side of the pair")
                    .isEqualTo(push ? "source" : "target");
            assertThat(r.get(push ? "sourceNode" : "targetNode").asString()).isEqualTo("node-u");
            assertThat(f.get("evidence").get("peer").asString()).isEqualTo(capped.hostPort());
            assertThat(f.get("evidence").get("httpStatus").asInt()).isEqualTo(401);
            assertThat(f.get("cause").asString()).startsWith("This agent has no shared token (IMEXPROBE_AUTH_TOKEN), "
                    + "so its request to the peer agent at " + capped.hostPort() + " went unsigned");
        }
        String direction = new java.util.Random().nextBoolean() ? "push" : "pull";
        JsonNode in = capped.get("/probe?target=" + untokened.hostPort() + "&direction=" + direction).json()
                .get("results").get(0);
        assertThat(in.get("finding").get("code").asString()).as("%s", in).isEqualTo("PEER_REJECTED");
        assertThat(in.get("finding").get("blame").asString()).as("the agent without a token, whichever side it is")
                .isEqualTo(direction.equals("push") ? "target" : "source");
        assertThat(in.get("finding").get("evidence").get("detail").asString())
                .contains("this agent has no shared token, so it accepts no export or import requests");
        JsonNode lab = untokened.get("/probe?target=" + open.hostPort() + "&direction=both").json();
        assertThat(lab.get("verdict").asString()).as("a peer that requires no token: %s", lab).isEqualTo("pass");

        String warning = "imexprobe.auth.token (IMEXPROBE_AUTH_TOKEN) is not set: peers that require a token refuse "
                + "this agent's probes (finding NO_AUTH_TOKEN)";
        for (AgentProcess a : new AgentProcess[] {untokened, open, capped}) {
            int said = a.logText().split(java.util.regex.Pattern.quote(warning), -1).length - 1;
            assertThat(said).as("the start's warning in %s's log", a.name()).isEqualTo(a == capped ? 0 : 1);
        }
        assertThat(untokened.logText()).contains(warning + ", and this agent refuses every peer's exports and imports");
        assertThat(open.logText()).contains(warning + ", and this agent takes exports and imports from anyone");
    }

    // ---- foreign memory ---------------------------------------------------------------------------------------

    @Test
    void memoryThatDoesNotHoldOurPatternIsNeverWrittenTo() {
        // Someone else's allocation (here: an export with another seed) imported with a seed and a write-back seed:
        // the read does not match, so the write-back is not attempted, and the memory is unchanged.
        AgentProcess.Reply foreign = open.post("/v1/exports", "{\"seed\":\"1111\"}", null);
        String id = foreign.json().get("id").asString();
        JsonNode in = open.post("/v1/imports", "{\"handle\":\"" + foreign.json().get("handle").asString()
                + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":" + MIB2 + ",\"seed\":\"2222\",\"writebackSeed\":\"3333\"}",
                null).json();
        assertThat(in.get("verdict").asString()).isEqualTo("fail");
        assertThat(in.get("stages").get(4).get("name").asString()).isEqualTo("verify");
        assertThat(in.get("stages").get(4).get("status").asString()).isEqualTo("failed");
        assertThat(in.get("stages").get(5).get("name").asString()).isEqualTo("writeback");
        assertThat(in.get("stages").get(5).get("status").asString()).isEqualTo("skipped");
        JsonNode still = open.post("/v1/exports/" + id + "/verify", "{\"seed\":\"1111\"}", null).json().get("stage");
        assertThat(still.get("status").asString()).as("the foreign memory still holds its own contents").isEqualTo("ok");
        assertThat(in.toString()).doesNotContain(foreign.json().get("handle").asString());
        open.send(java.net.http.HttpRequest.newBuilder(open.uri("/v1/exports/" + id)).DELETE(), Duration.ofSeconds(30));
    }

    // ---- the ladder -------------------------------------------------------------------------------------------

    @Test
    void theLadderIsOffByDefaultAndAnswers404ToTheTokenAnd401ToEveryoneElse() {
        assertProblem(capped.post("/v1/ladder", "{}"), 404, "ladder-disabled", "the ladder is off on this agent");
        assertProblem(capped.post("/v1/ladder", "{}", null), 401, "unauthorized", "no Authorization header");
        assertProblem(capped.post("/v1/ladder", "{}", "Bearer wrong-token-0123456789abcdef"), 401, "unauthorized",
                "bearer token is wrong");
    }

    // ---- caps -------------------------------------------------------------------------------------------------

    @Test
    void everyExportCapIsRefusedBeforeAnyDriverCall() {
        // Per export: 4 MiB is over the 2-granule cap.
        assertProblem(withoutDriverCall(capped, () -> capped.post("/v1/exports", "{\"sizeBytes\":" + 2 * MIB2 * 2 + "}")),
                413, "over-cap", "sizeBytes 8388608 is over this agent's cap of 4194304 bytes");
        assertProblem(withoutDriverCall(capped, () -> capped.post("/v1/imports", "{\"handle\":\"" + java.util.Base64
                        .getEncoder().encodeToString(new byte[64]) + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":"
                        + 4 * MIB2 + "}")),
                413, "over-cap", "sizeBytes 8388608 is over this agent's cap of 4194304 bytes");
        assertProblem(withoutDriverCall(capped, () -> capped.get("/probe?target=127.0.0.1:1&sizeBytes=" + 4 * MIB2)),
                413, "over-cap", "sizeBytes 8388608 is over this agent's cap of 4194304 bytes");
        // In all: two exports of 4 MiB fill the 8 MiB total; 2 MiB more is over it.
        assertThat(capped.post("/v1/exports", "{\"sizeBytes\":" + 2 * MIB2 + "}").status()).isEqualTo(201);
        assertThat(capped.post("/v1/exports", "{\"sizeBytes\":" + 2 * MIB2 + "}").status()).isEqualTo(201);
        assertProblem(withoutDriverCall(capped, () -> capped.post("/v1/exports", "{\"sizeBytes\":" + MIB2 + "}")),
                429, "over-cap", "exports would hold 10485760 bytes, more than the 8388608 this agent allows");
        assertThat(machine.stateFiles()).hasSize(2);
    }

    @Test
    void theCountCapHoldsUnderTwentyFourConcurrentRequests() throws Exception {
        int n = 24;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<AgentProcess.Reply>> replies = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                replies.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return capped.post("/v1/exports", "{}");
                }, pool));
            }
            go.countDown();
            Map<Integer, Integer> statuses = new TreeMap<>();
            for (CompletableFuture<AgentProcess.Reply> r : replies) {
                statuses.merge(r.get().status(), 1, Integer::sum);
            }
            System.out.printf("AccessControlIT: %d concurrent exports against a cap of 3: %s; allocation files %d%n", n,
                    statuses, machine.stateFiles().size());
            assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(201, 3, 429, n - 3));
            assertThat(machine.stateFiles()).hasSize(3);
            assertThat(capped.metric("imexprobe_allocations_live", "kind", "created")).isEqualTo(3.0);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theTtlReleasesWhatNobodyDeletes() {
        AgentProcess.Reply created = capped.post("/v1/exports", "{}");
        String id = created.json().get("id").asString();
        assertThat(machine.stateFiles()).hasSize(1);
        long start = System.nanoTime();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).isEmpty();
            assertThat(capped.liveAllocations()).isZero();
        });
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("AccessControlIT: an export with a TTL of 5 s was released after %.1f s%n", seconds);
        assertThat(seconds).as("released by its TTL, not before").isGreaterThan(3.0);
        assertProblem(capped.post("/v1/exports/" + id + "/verify", "{\"seed\":1}"), 404, "unknown-export", "no export");
        assertProblem(capped.delete("/v1/exports/" + id), 404, "unknown-export", "no export");
    }

    // ---- bodies -----------------------------------------------------------------------------------------------

    @Test
    void aHugeBodyWithTheTokenIsRefusedUnreadAndTheAgentKeepsItsMemory() throws IOException {
        // Announced 1 GiB, 1 KiB sent: the answer comes without the body.
        String announced = raw(capped.port(), "POST /v1/imports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + AgentProcess.TOKEN + "\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n{\"handle\":\""
                + "A".repeat(1000), null);
        assertThat(announced).startsWith("HTTP/1.1 400").contains("application/problem+json")
                .contains("request body of 1073741824 bytes is larger than 16384");
        // 256 MiB really sent, chunked (no length to judge by): read up to the limit, refused, the rest dropped.
        long rssBefore = ProcessStats.of(capped.pid()).rssKiB();
        String chunked = raw(capped.port(), "POST /v1/exports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + AgentProcess.TOKEN + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                256 << 20);
        long rssAfter = ProcessStats.of(capped.pid()).rssKiB();
        System.out.printf("AccessControlIT: 256 MiB body with the token: refused; agent RSS %d -> %d MiB%n",
                rssBefore / 1024, rssAfter / 1024);
        assertThat(chunked).startsWith("HTTP/1.1 400").contains("request body of more than 16384 bytes is larger");
        assertThat(capped.alive()).isTrue();
        assertThat(capped.get("/actuator/health/liveness").status()).isEqualTo(200);
        assertThat(rssAfter - rssBefore).as("KiB the agent grew by").isLessThan(64 * 1024);
        assertThat(capped.logText()).doesNotContain("OutOfMemoryError");
    }

    /** Sends a head, then (when chunkedBytes is given) that many bytes of chunked body; returns what came back. */
    private static String raw(int port, String head, Integer chunkedBytes) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.UTF_8));
            if (chunkedBytes != null) {
                byte[] chunk = new byte[64 * 1024];
                java.util.Arrays.fill(chunk, (byte) 'A');
                byte[] size = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
                try {
                    for (int sent = 0; sent < chunkedBytes; sent += chunk.length) {
                        out.write(size);
                        out.write(chunk);
                        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    }
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // The agent answered and closed while the body was still coming: what it said is below.
                }
            }
            out.flush();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            try {
                return RawAnswers.readJsonAnswer(s.getInputStream(), got);
            } catch (IOException e) {
                return got.toString(StandardCharsets.UTF_8); // reset after the answer: keep what was read
            }
        }
    }

    // ---- what is exposed -------------------------------------------------------------------------------------

    @Test
    void actuatorExposesOnlyHealthInfoAndPrometheusAndNothingCarriesTheToken() {
        JsonNode links = capped.get("/actuator").json().get("_links");
        List<String> names = new ArrayList<>();
        links.propertyNames().forEach(names::add);
        assertThat(names).containsExactlyInAnyOrder("self", "health", "health-path", "info", "prometheus");
        List<String> hidden = List.of("/actuator/env", "/actuator/env/imexprobe.auth.token", "/actuator/heapdump",
                "/actuator/threaddump", "/actuator/mappings", "/actuator/beans", "/actuator/configprops",
                "/actuator/loggers", "/actuator/metrics", "/actuator/conditions", "/actuator/scheduledtasks",
                "/actuator/logfile", "/actuator/sbom", "/actuator/caches", "/actuator/startup");
        for (String path : hidden) {
            AgentProcess.Reply r = capped.get(path);
            assertProblem(r, 404, "not-found", "");
        }
        AgentProcess.Reply shutdown = capped.post("/actuator/shutdown", "{}", null);
        assertThat(shutdown.status()).as("%s", shutdown).isIn(404, 405);
        assertThat(shutdown.contentType()).startsWith("application/problem+json");
        assertThat(capped.alive()).isTrue();
        // The token appears in no answer and no log line.
        for (String path : List.of("/actuator/info", "/actuator/health", "/actuator/prometheus", "/v1/node",
                "/v1/mesh", "/", "/openapi.yaml")) {
            assertThat(capped.get(path).body()).as(path).doesNotContain(AgentProcess.TOKEN);
        }
        assertThat(capped.logText()).doesNotContain(AgentProcess.TOKEN);
        System.out.printf("AccessControlIT: actuator links %s; %d other actuator endpoints 404%n", names,
                hidden.size() + 1);
    }
}
