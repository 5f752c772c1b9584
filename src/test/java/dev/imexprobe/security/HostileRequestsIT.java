package dev.imexprobe.security;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * 10,000 hostile requests (seeded; {@code -Dimexprobe.fuzz.seed=…} replays a run, {@code
 * -Dimexprobe.fuzz.requests=…} changes the count) against one agent, a real process on the fake driver with its
 * token set: see {@link HostileRequests} for the mix. Every answer is held to {@link Replies#violations}, and none
 * may contain the memory of an export whose contents are known (checked against the fake's own allocation file
 * first) or the token. At the end the agent is alive and live, holds no driver resource, the fake's allocation
 * folder is empty, and the stranger its probes were pointed at never saw the token.
 */
class HostileRequestsIT {

    static final long KNOWN_SEED = 0x5EC0_DE00_C0FF_EE01L;
    /** The fake's allocation file: a 64 KiB header, then the memory (native/fake/README.md, "The state directory"). */
    static final int FAKE_HEADER_BYTES = 64 * 1024;

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess agent;
    /** The other agent of the machine, which the valid probes target (an agent refuses to probe itself). */
    static AgentProcess peer;
    static WireMockServer stranger;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine")).gpus(2);
        stranger = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        stranger.start();
        agent = AgentProcess.start("hostile", dir, machine.env(), "node-hostile",
                // The export of known contents must outlive the run (TTL expiry is AccessControlIT's).
                Map.of("IMEXPROBE_PROBE_TIMEOUT", "3s", "IMEXPROBE_EXPORTS_TTL", "1h"));
        peer = AgentProcess.start("hostile-peer", dir, machine.env(), "node-hostile-peer", Map.of());
        AgentProcess.awaitReady(agent, peer);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(agent, peer);
        if (stranger != null) {
            stranger.stop();
        }
    }

    /** What the run created and released, as the generator sees it. */
    static final class State implements HostileRequests.World {
        final int closedPort = AgentProcess.freePort();
        final List<String> gpus = new ArrayList<>();
        final List<String> live = new CopyOnWriteArrayList<>();
        final List<String> deleted = new CopyOnWriteArrayList<>();
        final Map<String, String> handles = new java.util.concurrent.ConcurrentHashMap<>();
        final List<String> released = new CopyOnWriteArrayList<>();
        String knownId;
        String knownHandle;

        @Override
        public int agentPort() {
            return agent.port();
        }

        @Override
        public int peerPort() {
            return peer.port();
        }

        @Override
        public int closedPort() {
            return closedPort;
        }

        @Override
        public int strangerPort() {
            return stranger.port();
        }

        @Override
        public String token() {
            return AgentProcess.TOKEN;
        }

        @Override
        public String knownHandle() {
            return knownHandle;
        }

        @Override
        public long knownSize() {
            return HostileRequests.GRANULARITY;
        }

        @Override
        public long knownSeed() {
            return KNOWN_SEED;
        }

        @Override
        public long knownWritebackSeed() {
            return KNOWN_SEED; // writes the same pattern back: the known memory stays known
        }

        @Override
        public List<String> liveExports() {
            return live;
        }

        @Override
        public List<String> deletedExports() {
            return deleted;
        }

        @Override
        public List<String> releasedHandles() {
            return released;
        }

        @Override
        public List<String> gpuUuids() {
            return gpus;
        }

        void created(String id, String handle) {
            live.add(id);
            handles.put(id, handle);
        }

        @Override
        public void deleted(String id) {
            live.remove(id);
            deleted.add(id);
            String h = handles.remove(id);
            if (h != null) {
                released.add(h);
            }
        }
    }

    @Test
    void tenThousandHostileRequestsNoFiveHundredNoCrashNoLeakNoMemoryContents() throws Exception {
        long seed = Long.getLong("imexprobe.fuzz.seed", System.nanoTime());
        int n = Integer.getInteger("imexprobe.fuzz.requests", 10_000);
        System.out.printf("HostileRequestsIT: seed %d (replay with -Dimexprobe.fuzz.seed=%d), %d requests%n", seed,
                seed, n);
        State state = new State();
        for (JsonNode g : agent.get("/v1/node").json().get("gpus")) {
            state.gpus.add(g.get("uuid").asString());
        }

        // The export whose memory is known, proven against the fake's own file before it is looked for anywhere.
        AgentProcess.Reply known = agent.post("/v1/exports", Map.of("gpu", 0, "sizeBytes", HostileRequests.GRANULARITY,
                "handleType", "FABRIC", "seed", Long.toString(KNOWN_SEED)));
        assertThat(known.status()).as("%s", known).isEqualTo(201);
        state.knownId = known.json().get("id").asString();
        state.knownHandle = known.json().get("handle").asString();
        PatternWords memory = new PatternWords(KNOWN_SEED, HostileRequests.GRANULARITY,
                new Random64(seed).longs(16));
        assertThat(machine.stateFiles()).hasSize(1);
        byte[] file = Files.readAllBytes(machine.stateFiles().getFirst());
        byte[] first = Arrays.copyOfRange(file, FAKE_HEADER_BYTES, FAKE_HEADER_BYTES + 24);
        assertThat(first).as("the detector computes the bytes the export really holds").isEqualTo(memory.bytes(0, 3));
        for (int offset = 0; offset < 3; offset++) {
            byte[] leak = Arrays.copyOfRange(file, FAKE_HEADER_BYTES + offset, FAKE_HEADER_BYTES + offset + 40);
            assertThat(memory.foundIn("x" + Base64.getEncoder().encodeToString(leak)))
                    .as("base64 of the memory from byte %d is recognised", offset).isNotNull();
        }
        assertThat(memory.foundIn(agent.get("/v1/node").body() + known.body())).isNull();

        // A released handle to replay.
        AgentProcess.Reply gone = agent.post("/v1/exports", "{}");
        state.created(gone.json().get("id").asString(), gone.json().get("handle").asString());
        assertThat(agent.delete("/v1/exports/" + gone.json().get("id").asString()).status()).isEqualTo(200);
        state.deleted(gone.json().get("id").asString());

        HostileRequests requests = new HostileRequests(seed, state);
        Map<String, Integer> families = new TreeMap<>();
        Map<Integer, Integer> statuses = new TreeMap<>();
        List<String> violations = new ArrayList<>();
        int violating = 0;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            HostileRequests.Case c = requests.next();
            RawHttp.Reply reply = RawHttp.send(agent.port(), c.request());
            families.merge(c.family(), 1, Integer::sum);
            statuses.merge(reply.status(), 1, Integer::sum);
            List<String> v = new ArrayList<>(Replies.violations(c, reply));
            String everything = reply.headers().toString() + new String(reply.body(), StandardCharsets.ISO_8859_1);
            String leaked = memory.foundIn(everything + reply.text());
            if (leaked != null) {
                v.add("memory contents in the answer: " + leaked);
            }
            if (everything.contains(AgentProcess.TOKEN)) {
                v.add("the token in the answer");
            }
            if (reply.status() == 201 && c.request().method().equals("POST")) {
                // Whatever spelling reached it ("/v1/./exports", "/static/../v1/exports", an absolute-form target:
                // the server normalises them as HTTP says), an export made is tracked: deleted later or at the end.
                JsonNode doc = Replies.json(reply);
                if (doc.hasNonNull("id") && doc.hasNonNull("handle")) {
                    state.created(doc.get("id").asString(), doc.get("handle").asString());
                }
            }
            if (!v.isEmpty()) {
                violating++;
                if (violations.size() < 60) {
                    violations.add("#" + i + " " + c.family() + ": " + c.request().describe() + " -> " + reply.status()
                            + " " + reply.contentType() + " " + Replies.preview(reply.text()) + "\n      " + v);
                }
            } else {
                c.after().accept(reply);
            }
            if (i % 1000 == 999 && !agent.alive()) {
                throw new AssertionError("the agent died after request #" + i + ":\n" + agent.logTail());
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("HostileRequestsIT: %d requests in %.1f s (%.0f/s); %d violated a rule%n", n, seconds,
                n / seconds, violating);
        System.out.println("HostileRequestsIT: by family " + families);
        System.out.println("HostileRequestsIT: by status " + statuses);
        assertThat(violations).as("answers that broke a rule (first 60 of %d; seed %d)", violating, seed).isEmpty();

        // Alive, live, and nothing left behind.
        assertThat(agent.alive()).isTrue();
        assertThat(agent.get("/actuator/health/liveness").json().get("status").asString()).isEqualTo("UP");
        for (String id : List.copyOf(state.live)) {
            assertThat(agent.delete("/v1/exports/" + id).status()).isEqualTo(200);
        }
        assertThat(agent.delete("/v1/exports/" + state.knownId).status()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            assertThat(agent.liveAllocations()).as("imexprobe_allocations_live").isZero();
            assertThat(peer.liveAllocations()).as("imexprobe_allocations_live of the other agent").isZero();
            assertThat(machine.stateFiles()).as("allocation files of the fake").isEmpty();
        });
        System.out.printf("HostileRequestsIT: exports made %d, released handles replayed from %d; allocations live 0, "
                + "allocation files 0%n", state.deleted.size() + 1, state.released.size());

        // The stranger /probe was aimed at saw requests, never a credential.
        List<LoggedRequest> seen = stranger.findAll(anyRequestedFor(anyUrl()));
        assertThat(seen).isNotEmpty();
        for (LoggedRequest r : seen) {
            assertThat(r.getHeaders().all().toString() + r.getBodyAsString()).doesNotContain(AgentProcess.TOKEN);
            assertThat(r.getHeader("Authorization")).as("%s %s", r.getMethod(), r.getUrl()).isNull();
        }
        System.out.printf("HostileRequestsIT: the stranger saw %d requests, none with a credential%n", seen.size());
        String log = agent.logText();
        assertThat(log).doesNotContain("OutOfMemoryError").doesNotContain("SIGSEGV")
                .doesNotContain("the agent failed unexpectedly");
        assertThat(log).as("the token is never logged").doesNotContain(AgentProcess.TOKEN);
        assertThat(Files.exists(Path.of("hs_err_pid" + agent.pid() + ".log"))).isFalse();
    }

    /** A few longs from the run's seed, for the word indices the detector also looks for. */
    record Random64(long seed) {
        long[] longs(int n) {
            java.util.Random r = new java.util.Random(seed ^ 0x5DEECE66DL);
            long[] out = new long[n];
            for (int i = 0; i < n; i++) {
                out[i] = r.nextLong();
            }
            return out;
        }
    }
}
