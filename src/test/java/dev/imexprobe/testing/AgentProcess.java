package dev.imexprobe.testing;

import dev.imexprobe.bench.AgentJvm;
import dev.imexprobe.json.Json;

import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One agent ({@code serve}, started as the image starts it: {@link Launch#standard()}) as a real process on loopback: its own port, its own
 * environment (usually a {@link FakeMachine}'s), its own fault file, its log in a file. {@link #start} launches
 * without waiting, so a test class can start several agents side by side and then {@link #awaitReady} them.
 * Every call below goes through HTTP, as a peer or an operator would.
 */
public final class AgentProcess implements AutoCloseable {

    /** Spring needs 10-15 s on a busy two-core machine; leave room for several agents starting at once. */
    public static final Duration READY_TIMEOUT = Duration.ofSeconds(180);
    public static final String TOKEN = "it-shared-token-0123456789abcdef";

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final int PORT_ATTEMPTS = 3;

    /** What starts the agent: the jar and the JVM flags before {@code -jar}. */
    public record Launch(Path jar, List<String> jvmFlags) {

        /** Small test agents: one of several on a two-core machine. */
        static final List<String> TEST_FLAGS = List.of("--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC",
                "-Xmx192m", "-Xss512k", "-XX:TieredStopAtLevel=1");

        /** target/imexprobe.jar with the test flags. */
        public static Launch fatJar() {
            return new Launch(NativeBuild.jar(), TEST_FLAGS);
        }

        /**
         * As the image starts the agent (extracted jar, AOT cache: {@link NativeBuild#imageLayout}) when that
         * layout could be made, else {@link #fatJar()}. The fat jar stays covered by demo, check, ladder and bench.
         */
        public static Launch standard() {
            return NativeBuild.imageLayout(TEST_FLAGS).map(l -> {
                List<String> flags = new ArrayList<>(TEST_FLAGS);
                flags.add("-XX:AOTCache=" + l.cache());
                return new Launch(l.jar(), List.copyOf(flags));
            }).orElseGet(Launch::fatJar);
        }
    }

    private final String name;
    private final Launch launch;
    private final Map<String, String> env;
    private final Path log;
    private final Path faultFile;
    private AgentJvm jvm;
    private int attempts;

    private AgentProcess(String name, Launch launch, Map<String, String> env, Path dir) {
        this.name = name;
        this.launch = launch;
        this.env = env;
        this.log = dir.resolve(name + ".log");
        this.faultFile = dir.resolve(name + ".faults");
    }

    /**
     * Launches an agent and returns at once. {@code machineEnv} is the fake machine's environment (or any
     * other); this adds the token, the node name, a free port, loopback binding, a mesh that never runs on its
     * own, and a fault file of this agent alone (FAKECUDA_FAULTS=@file, switched with {@link #faults}).
     * Entries of {@code extra} win over all of that.
     */
    public static AgentProcess start(String name, Path dir, Map<String, String> machineEnv, String node,
                                     Map<String, String> extra) {
        return start(name, dir, machineEnv, node, extra, Launch.standard());
    }

    /** As {@link #start(String, Path, Map, String, Map)}, from another jar or with other JVM flags. */
    public static AgentProcess start(String name, Path dir, Map<String, String> machineEnv, String node,
                                     Map<String, String> extra, Launch launch) {
        Map<String, String> env = new LinkedHashMap<>(machineEnv);
        env.put("IMEXPROBE_AUTH_TOKEN", TOKEN);
        env.put("IMEXPROBE_NODE_NAME", node);
        env.put("SERVER_ADDRESS", "127.0.0.1");
        // The mesh would probe on its own and refresh the node report; these tests probe on demand only.
        env.put("IMEXPROBE_MESH_INTERVAL", "100000h");
        env.put("IMEXPROBE_PEERS_STATIC", "");
        env.put("LOGGING_LEVEL_ROOT", "WARN");
        env.put("LOGGING_LEVEL_DEV_IMEXPROBE", "INFO");
        env.putAll(extra);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        AgentProcess agent = new AgentProcess(name, launch, env, dir);
        agent.faults("");
        agent.env.put("FAKECUDA_FAULTS", "@" + agent.faultFile);
        agent.launch();
        return agent;
    }

    private void launch() {
        attempts++;
        try {
            // Nothing of the test JVM's own environment that the agent or the fake reads may leak in.
            jvm = AgentJvm.start(name, NativeBuild.java(), launch.jar(), launch.jvmFlags(), env,
                    k -> k.startsWith("IMEXPROBE_") || k.startsWith("FAKECUDA_") || k.startsWith("SERVER_")
                            || k.startsWith("MANAGEMENT_") || k.equals("CUDA_VISIBLE_DEVICES"),
                    AgentJvm.freePort(), log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Closes each agent that was started (a null is one whose start failed); for {@code @AfterAll}. */
    public static void closeAll(AgentProcess... agents) {
        for (AgentProcess a : agents) {
            if (a != null) {
                a.close();
            }
        }
    }

    /** Waits until each of several agents started side by side is ready. */
    public static void awaitReady(AgentProcess... agents) {
        for (AgentProcess a : agents) {
            a.awaitReady();
        }
    }

    /**
     * Waits until readiness answers UP. An agent whose port was taken meanwhile (the port was free when chosen)
     * is relaunched on another.
     */
    public AgentProcess awaitReady() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (true) {
            try {
                jvm.awaitReady(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                return this;
            } catch (IOException e) {
                if (jvm.alive()) {
                    throw new IllegalStateException("agent " + name + " not ready within " + READY_TIMEOUT + "; log "
                            + log + ":\n" + logTail());
                }
                if (logText().contains("already in use") && attempts < PORT_ATTEMPTS) {
                    launch();
                    continue;
                }
                int code = jvm.exitValue();
                throw new IllegalStateException("agent " + name + " exited with " + code
                        + (code == 143 || code == 137 ? " (SIGTERM/SIGKILL from outside this test: someone's pkill?)" : "")
                        + " before it was ready; log " + log + ":\n" + logTail());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    public String name() {
        return name;
    }

    public int port() {
        return jvm.port();
    }

    /** host:port, as /probe?target= and the peer list want it. */
    public String hostPort() {
        return "127.0.0.1:" + port();
    }

    public String baseUrl() {
        return "http://" + hostPort();
    }

    public URI uri(String pathAndQuery) {
        return URI.create(baseUrl() + pathAndQuery);
    }

    public long pid() {
        return jvm.pid();
    }

    public boolean alive() {
        return jvm.alive();
    }

    public Path log() {
        return log;
    }

    public String logText() {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String logTail() {
        String t = logText();
        return t.length() > 6000 ? "…" + t.substring(t.length() - 6000) : t;
    }

    /**
     * Sets this agent's injected faults (see native/fake/README.md, "Faults"); the fake re-reads the file on
     * every call. Written beside and renamed, so the fake never reads half a file.
     */
    public AgentProcess faults(String spec) {
        try {
            Path tmp = Files.createTempFile(faultFile.getParent(), name + "-faults", ".tmp");
            Files.writeString(tmp, spec);
            Files.move(tmp, faultFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    public AgentProcess clearFaults() {
        return faults("");
    }

    /**
     * Sets {@code spec} plus a malformed item the fake reports on stderr (this agent's log) at the next call of
     * any driver entry point of this process, once per library: a driver-call detector. Returns the marker for
     * {@link #driverCalledSince}.
     */
    public String faultsWithCallMarker(String spec) {
        String marker = "call-marker-" + Long.toHexString(System.nanoTime());
        faults((spec.isEmpty() ? "" : spec + "\n") + marker + "=1");
        return marker;
    }

    /** Whether the fake reported {@code marker}: some driver call happened after it was set. */
    public boolean driverCalledSince(String marker) {
        return logText().contains("FAKECUDA_FAULTS item '" + marker + "=1' ignored");
    }

    // ---- HTTP ------------------------------------------------------------------------------------------------

    /** One answer: status, headers and body, with the body as JSON when it is JSON. */
    public record Reply(int status, Map<String, List<String>> headers, String body) {

        public JsonNode json() {
            return Json.MAPPER.readTree(body);
        }

        public String contentType() {
            return header("Content-Type").orElse("");
        }

        public Optional<String> header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .flatMap(e -> e.getValue().stream()).findFirst();
        }

        @Override
        public String toString() {
            return status + " " + contentType() + " " + (body.length() > 4000 ? body.substring(0, 4000) + "…" : body);
        }
    }

    public Reply get(String pathAndQuery) {
        return send(HttpRequest.newBuilder(uri(pathAndQuery)).GET(), Duration.ofSeconds(60));
    }

    public Reply get(String pathAndQuery, Duration timeout) {
        return send(HttpRequest.newBuilder(uri(pathAndQuery)).GET(), timeout);
    }

    /** POST with the operator's bearer token. */
    public Reply post(String path, String jsonBody) {
        return post(path, jsonBody, "Bearer " + TOKEN);
    }

    /** POST with the given Authorization header (null: none). */
    public Reply post(String path, String jsonBody, String authorization) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(jsonBody));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return send(b, Duration.ofSeconds(60));
    }

    public Reply post(String path, Map<String, ?> body) {
        return post(path, Json.MAPPER.writeValueAsString(body));
    }

    /**
     * A whole exchange inside this one agent, by hand, since {@code /probe} refuses the agent itself: a 2 MiB export
     * with {@code seed}, its handle imported here with the same seed, the export deleted. Throws unless the export was
     * made (201) and deleted (200); returns the import's reply. It proves what a process importing its own handle
     * proves, and no more.
     */
    public Reply exchangeInItself(long seed) {
        Reply exported = post("/v1/exports", Map.of("sizeBytes", 2097152, "handleType", "FABRIC",
                "seed", Long.toString(seed)));
        if (exported.status() != 201) {
            throw new AssertionError("the export was not made: " + exported);
        }
        JsonNode export = exported.json();
        Reply imported = post("/v1/imports", Map.of("handle", export.get("handle").asString(), "handleType", "FABRIC",
                "sizeBytes", 2097152, "seed", Long.toString(seed)));
        Reply deleted = delete("/v1/exports/" + export.get("id").asString());
        if (deleted.status() != 200) {
            throw new AssertionError("the export was not deleted: " + deleted);
        }
        return imported;
    }

    /** DELETE with the operator's bearer token. */
    public Reply delete(String path) {
        return send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + TOKEN).DELETE(),
                Duration.ofSeconds(60));
    }

    public Reply send(HttpRequest.Builder request, Duration timeout) {
        try {
            HttpResponse<String> r = HTTP.send(request.timeout(timeout).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Reply(r.statusCode(), r.headers().map(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException("agent " + name + " (" + (alive() ? "alive" : "dead") + "): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The UUID of this agent's GPU with CUDA ordinal {@code index}, from its /v1/node. */
    public String gpuUuid(int index) {
        for (JsonNode gpu : get("/v1/node").json().get("gpus")) {
            if (gpu.get("index").asInt() == index) {
                return gpu.get("uuid").asString();
            }
        }
        throw new AssertionError(name + " has no GPU " + index);
    }

    /** This agent's pair from {@code sourceGpu} to {@code targetGpu} in its /v1/mesh, or null. */
    public JsonNode meshPair(String sourceGpu, String targetGpu) {
        for (JsonNode pair : get("/v1/mesh").json().path("pairs")) {
            if (pair.path("sourceGpu").asString().equals(sourceGpu) && pair.path("targetGpu").asString().equals(targetGpu)) {
                return pair;
            }
        }
        return null;
    }

    // ---- metrics ---------------------------------------------------------------------------------------------

    /**
     * The value of one series of /actuator/prometheus, e.g. {@code metric("imexprobe_allocations_live",
     * "kind", "imported")}; the labels given must all match (others may exist). Absent: NaN.
     */
    public double metric(String name, String... labels) {
        Reply r = get("/actuator/prometheus");
        if (r.status() != 200) {
            throw new IllegalStateException("/actuator/prometheus answered " + r);
        }
        return sample(r.body(), name, labels);
    }

    /** Sums the samples of {@code name} whose labels include every given pair. NaN when none matches. */
    public static double sample(String exposition, String name, String... labels) {
        return AgentJvm.sample(exposition, name, labels);
    }

    /** Driver resources the agent holds (created + imported handles + mappings), from its metrics. */
    public double liveAllocations() {
        return metric("imexprobe_allocations_live");
    }

    // ---- end -------------------------------------------------------------------------------------------------

    /** SIGKILL, as a crash or an OOM kill would end it; waits until it is gone. */
    public void kill() {
        jvm.kill();
    }

    /** SIGTERM and a graceful stop (exports released); SIGKILL if it takes too long. */
    @Override
    public void close() {
        if (jvm != null) {
            jvm.close();
        }
    }

    /** A port nothing listens on right now (a peer that is not there, or an agent's own). */
    public static int freePort() {
        return AgentJvm.freePort();
    }

    @Override
    public String toString() {
        return name + "@" + hostPort();
    }
}
