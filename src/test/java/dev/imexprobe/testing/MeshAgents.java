package dev.imexprobe.testing;

import dev.imexprobe.bench.AgentJvm;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Several agents ({@code serve}, launched as {@link AgentProcess.Launch#standard()}) on loopback forming one simulated NVLink domain:
 * each is its own "node" to the fake driver (its own host id, fault file and channel folder), all share one
 * allocation folder and one token, and every GPU is registered with the fabric (state COMPLETED, one cluster
 * UUID, one clique) so that imports across hosts work as the fake's README describes. Ports are reserved before
 * any agent starts, so a static peer list or a Kubernetes pod list can name them all.
 */
public final class MeshAgents implements AutoCloseable {

    /** Spring needs 10-20 s on a busy two-core machine; several agents start at once. */
    public static final Duration READY_TIMEOUT = Duration.ofSeconds(180);
    public static final String TOKEN = "mesh-it-shared-token-0123456789ab";
    public static final String CLUSTER = "6a1c7b2e-5d0f-4c3b-9a8e-00000000c0de";
    public static final long CLIQUE = 7;

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final Path dir;
    private final Path sharedState;
    private final List<Agent> agents = new ArrayList<>();

    /** A fresh folder for machines and logs (logs stay after the run, for CI artefacts). */
    public MeshAgents(Path dir) {
        this.dir = dir.toAbsolutePath();
        this.sharedState = this.dir.resolve("shared-state");
        try {
            if (Files.exists(this.dir)) {
                try (Stream<Path> s = Files.walk(this.dir)) {
                    for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(p);
                    }
                }
            }
            Files.createDirectories(sharedState);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Under target/, named after the test class. */
    public static MeshAgents forTest(Class<?> testClass) {
        return new MeshAgents(Path.of("target", "mesh-it", testClass.getSimpleName()));
    }

    /** A node with one fabric-registered H200 and channel0, not started yet. */
    public Agent add(String node, Map<String, String> extra) {
        FakeMachine machine = FakeMachine.h200(dir.resolve(node)).host(node).fabric(0, 3, CLUSTER, CLIQUE);
        return add(node, machine, extra);
    }

    /** A node on the given machine (its own folder), not started yet. */
    public Agent add(String node, FakeMachine machine, Map<String, String> extra) {
        Agent a = new Agent(node, machine, freePort(), extra);
        agents.add(a);
        return a;
    }

    public List<Agent> agents() {
        return List.copyOf(agents);
    }

    public Path dir() {
        return dir;
    }

    /** Every agent's host:port, comma-separated: the same static list for all, self included. */
    public String staticList() {
        return agents.stream().map(Agent::hostPort).collect(Collectors.joining(","));
    }

    /** Starts every agent that is not running, then waits until each is live (and ready, if asked). */
    public void startAll(boolean awaitReady) {
        for (Agent a : agents) {
            if (!a.alive()) {
                a.start();
            }
        }
        for (Agent a : agents) {
            if (awaitReady) {
                a.awaitReady();
            } else {
                a.awaitLive();
            }
        }
    }

    @Override
    public void close() {
        agents.forEach(Agent::stop);
    }

    /**
     * Polls {@code probe} until {@code done} holds or {@code timeout} passes; returns the last value. Fails
     * with {@code what} and the last value seen.
     */
    public static <T> T eventually(Duration timeout, String what, Supplier<T> probe, Predicate<T> done) {
        long deadline = System.nanoTime() + timeout.toNanos();
        T last = null;
        RuntimeException lastError = null;
        while (true) {
            try {
                last = probe.get();
                lastError = null;
                if (done.test(last)) {
                    return last;
                }
            } catch (RuntimeException e) {
                lastError = e;
            }
            if (System.nanoTime() > deadline) {
                AssertionError failure = new AssertionError("not within " + timeout + ": " + what + "; last seen: "
                        + (lastError != null ? lastError : last));
                if (lastError != null) {
                    failure.initCause(lastError);
                }
                throw failure;
            }
            sleep(100);
        }
    }

    /** A port below the ephemeral range: the peer lists name it before the agent binds it ({@code AgentJvm}). */
    static int freePort() {
        return AgentJvm.freePort();
    }

    public static void sleepFor(Duration d) {
        sleep(d.toMillis());
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** An HTTP answer. */
    public record Reply(int status, String body) {
        public JsonNode json() {
            return JSON.readTree(body);
        }
    }

    /** One agent process; it can be stopped, killed and started again on the same port with the same node name. */
    public final class Agent {
        private final String node;
        private final FakeMachine machine;
        private final int port;
        private final Map<String, String> extra;
        private final Path log;
        private Process process;

        private Agent(String node, FakeMachine machine, int port, Map<String, String> extra) {
            this.node = node;
            this.machine = machine;
            this.port = port;
            this.extra = new LinkedHashMap<>(extra);
            this.log = dir.resolve(node + ".log");
        }

        public String node() {
            return node;
        }

        public FakeMachine machine() {
            return machine;
        }

        public int port() {
            return port;
        }

        public String hostPort() {
            return "127.0.0.1:" + port;
        }

        public Path log() {
            return log;
        }

        /** Sets (or with null removes) one environment variable for this and later starts. */
        public Agent env(String name, String value) {
            extra.put(name, value);
            return this;
        }

        /** Launches the agent and returns at once; its output is appended to {@link #log()}. */
        public Agent start() {
            Map<String, String> env = new LinkedHashMap<>(machine.env());
            env.put("FAKECUDA_STATE_DIR", sharedState.toString());
            env.put("IMEXPROBE_AUTH_TOKEN", TOKEN);
            env.put("IMEXPROBE_NODE_NAME", node);
            env.put("SERVER_PORT", Integer.toString(port));
            env.put("SERVER_ADDRESS", "127.0.0.1");
            env.put("LOGGING_LEVEL_ROOT", "WARN");
            env.put("LOGGING_LEVEL_DEV_IMEXPROBE", "INFO");
            env.putAll(extra);
            env.values().removeIf(v -> v == null);
            AgentProcess.Launch launch = AgentProcess.Launch.standard();
            List<String> cmd = new ArrayList<>(List.of(NativeBuild.java()));
            cmd.addAll(launch.jvmFlags());
            cmd.addAll(List.of("-jar", launch.jar().toString(), "serve"));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            // Nothing of the test JVM's own environment that the agent or the fake reads may leak in.
            pb.environment().keySet().removeIf(k -> k.startsWith("IMEXPROBE_") || k.startsWith("FAKECUDA_")
                    || k.startsWith("SERVER_") || k.startsWith("MANAGEMENT_") || k.startsWith("SPRING_")
                    || k.equals("CUDA_VISIBLE_DEVICES"));
            pb.environment().putAll(env);
            pb.redirectErrorStream(true);
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            try {
                appendLog("==== start " + node + " on port " + port + " ====\n");
                process = pb.start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return this;
        }

        public boolean alive() {
            return process != null && process.isAlive();
        }

        /** Waits until liveness answers UP. */
        public Agent awaitLive() {
            return await("/actuator/health/liveness");
        }

        /** Waits until liveness and readiness answer UP. */
        public Agent awaitReady() {
            await("/actuator/health/liveness");
            return await("/actuator/health/readiness");
        }

        private Agent await(String path) {
            long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
            while (System.nanoTime() < deadline) {
                if (!alive()) {
                    throw new IllegalStateException("agent " + node + " exited with "
                            + (process == null ? "?" : process.exitValue()) + " before " + path + " was UP; log "
                            + log + ":\n" + logTail());
                }
                try {
                    Reply r = get(path);
                    if (r.status() == 200 && r.body().contains("\"UP\"")) {
                        return this;
                    }
                } catch (UncheckedIOException e) {
                    // not listening yet
                }
                sleep(250);
            }
            throw new IllegalStateException("agent " + node + ": " + path + " not UP within " + READY_TIMEOUT
                    + "; log " + log + ":\n" + logTail());
        }

        /** Waits for the process to end by itself and returns its exit code (-1 when it did not end in time). */
        public int awaitExit(Duration timeout) {
            try {
                if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    return process.exitValue();
                }
                return -1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        /** As a crash or an OOM kill would: no shutdown hooks, nothing released. */
        public void kill() {
            if (process != null) {
                process.destroyForcibly();
                awaitExit(Duration.ofSeconds(20));
            }
        }

        /** SIGTERM, then SIGKILL after 20 s. */
        public void stop() {
            if (alive()) {
                process.destroy();
                if (awaitExit(Duration.ofSeconds(20)) < 0 && process.isAlive()) {
                    kill();
                }
            }
        }

        public Reply get(String pathAndQuery) {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + hostPort() + pathAndQuery))
                    .timeout(Duration.ofSeconds(30)).GET().build();
            try {
                HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
                return new Reply(r.statusCode(), r.body());
            } catch (IOException e) {
                if (process != null && !process.isAlive()) {
                    int code = process.exitValue();
                    throw new IllegalStateException("agent " + node + " is not running: it exited with " + code
                            + (code == 137 || code == 143 ? " (SIGKILL/SIGTERM from outside the test?)" : "")
                            + "; log " + log, e);
                }
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        public JsonNode json(String pathAndQuery) {
            Reply r = get(pathAndQuery);
            if (r.status() != 200) {
                throw new IllegalStateException(node + " " + pathAndQuery + ": HTTP " + r.status() + " " + r.body());
            }
            return r.json();
        }

        /** /v1/mesh (this agent's pairs) or with {@code domain} every agent's, merged and judged. */
        public JsonNode mesh(boolean domain) {
            return json(domain ? "/v1/mesh?scope=domain" : "/v1/mesh");
        }

        public String scrape() {
            Reply r = get("/actuator/prometheus");
            if (r.status() != 200) {
                throw new IllegalStateException(node + " scrape: HTTP " + r.status());
            }
            return r.body();
        }

        /** The value of one sample of the last scrape: {@code name} and label pairs that must all match. */
        public Double metric(String name, String... labels) {
            return MeshAgents.metric(scrape(), name, labels);
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

        private void appendLog(String line) throws IOException {
            Files.writeString(log, line, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
        }

        @Override
        public String toString() {
            return node + "@" + hostPort();
        }
    }

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** The first sample of {@code name} whose labels include every given name/value pair; null when none. */
    public static Double metric(String scrape, String name, String... labels) {
        for (Sample s : samples(scrape)) {
            if (!s.name().equals(name)) {
                continue;
            }
            boolean all = true;
            for (int i = 0; i + 1 < labels.length; i += 2) {
                if (!labels[i + 1].equals(s.labels().get(labels[i]))) {
                    all = false;
                    break;
                }
            }
            if (all) {
                return s.value();
            }
        }
        return null;
    }

    /** One line of the text format. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    public static List<Sample> samples(String scrape) {
        List<Sample> out = new ArrayList<>();
        for (String line : scrape.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line.strip());
            if (!m.matches()) {
                continue;
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
        }
        return out;
    }
}
