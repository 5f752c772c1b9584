package dev.imexprobe.cli;

import dev.imexprobe.cuda.NativeLibrary;
import dev.imexprobe.json.Json;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code demo}: a simulated IMEX domain on the fake driver — N nodes × M GPUs, one agent per GPU (the per-GPU
 * topology of the seed), real agent processes probing each other — with trouble built in so the diagnosis has
 * something to find: on the first node the seed failure model (same-node imports between containers that each
 * see one GPU fail with 101), and on the last node one agent without its IMEX channel (800). Everything it shows
 * is labelled simulated. Ctrl-C or --duration stops every agent and removes every file it made.
 */
final class DemoCommand {

    /** @param port the first agent's port; 0 = the first free block from 18080 */
    record Options(int nodes, int gpusPerNode, int port, Duration duration, Duration interval) {
    }

    /** One agent of the simulated domain. */
    record DemoAgent(String node, int gpu, int port, Map<String, String> env) {
        String address() {
            return "localhost:" + port;
        }
    }

    private DemoCommand() {
    }

    static int run(String[] args, PrintStream out) {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("demo: " + e.getMessage());
            Main.usage();
            return Main.USAGE;
        }
        int agentCount = o.nodes() * o.gpusPerNode();
        int base = o.port() > 0 ? o.port() : freeBlock(18080, agentCount);
        if (base < 0 || !free(base, agentCount)) {
            System.err.println("demo: ports " + (o.port() > 0 ? o.port() : 18080) + "… are taken; pass --port with "
                    + agentCount + " free ports in a row");
            return 1;
        }
        o = new Options(o.nodes(), o.gpusPerNode(), base, o.duration(), o.interval());
        Path root;
        try {
            root = Files.createTempDirectory("imexprobe-demo-");
        } catch (IOException e) {
            System.err.println("demo: cannot create a temporary folder: " + e.getMessage());
            return 1;
        }
        List<Process> processes = new ArrayList<>();
        Thread cleanup = new Thread(() -> stop(processes, root), "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            List<DemoAgent> agents = plan(o, root, NativeLibrary.fakeDriverDirectory());
            for (DemoAgent a : agents) {
                processes.add(start(a, root));
            }
            DemoAgent first = agents.getFirst();
            out.printf("SIMULATED IMEX domain: %d nodes × %d GPUs, %d agents on the fake driver (nothing here runs on a GPU)%n",
                    o.nodes(), o.gpusPerNode(), agents.size());
            out.printf("built-in trouble: %s runs the seed failure model (same-node imports → 101); %s has no IMEX channel (→ 800)%n",
                    agents.getFirst().node(), troubleAgent(agents).node() + " GPU " + troubleAgent(agents).gpu());
            waitReady(agents, processes, Duration.ofSeconds(90));
            out.printf("matrix page:  http://localhost:%d/%n", first.port());
            out.printf("metrics:      http://localhost:%d/actuator/prometheus%n", first.port());
            out.printf("mesh (JSON):  http://localhost:%d/v1/mesh?scope=domain%n", first.port());
            out.println(o.duration() == null ? "press Ctrl-C to stop" : "running for " + o.duration().toSeconds() + " s");
            out.flush();
            watch(first, processes, o, out);
        } catch (IOException e) {
            System.err.println("demo: " + e.getMessage());
            printLogs(root);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stop(processes, root);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException e) {
                // already shutting down: the hook runs anyway, and stop() is idempotent
            }
        }
        out.println("stopped every agent and removed " + root);
        return 0;
    }

    static Options parse(String[] args) {
        int nodes = 2;
        int gpus = 2;
        int port = 0;
        Duration duration = null;
        Duration interval = Duration.ofSeconds(2);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--nodes" -> nodes = number(args, ++i, a, 1, 16);
                case "--gpus-per-node" -> gpus = number(args, ++i, a, 1, 8);
                case "--port" -> port = number(args, ++i, a, 1024, 64000);
                case "--duration" -> duration = duration(args, ++i, a);
                case "--interval" -> interval = duration(args, ++i, a);
                default -> throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        if (nodes * gpus < 2) {
            throw new IllegalArgumentException("a domain needs at least two agents (--nodes × --gpus-per-node ≥ 2)");
        }
        return new Options(nodes, gpus, port, duration, interval);
    }

    /** The agents to start and their environments: pure, so a test can check the plan. */
    static List<DemoAgent> plan(Options o, Path root, Path fakeLibs) throws IOException {
        Path state = Files.createDirectories(root.resolve("state"));
        String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
        String cluster = "d3e0c0de-0000-4000-8000-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(6));
        List<String> all = new ArrayList<>();
        for (int i = 0; i < o.nodes() * o.gpusPerNode(); i++) {
            all.add("localhost:" + (o.port() + i));
        }
        List<DemoAgent> agents = new ArrayList<>();
        for (int n = 0; n < o.nodes(); n++) {
            String node = "demo-node-" + (n + 1);
            Path nodeDir = Files.createDirectories(root.resolve(node));
            Path channels = Files.createDirectories(nodeDir.resolve("channels"));
            Files.writeString(channels.resolve("channel0"), "");
            Path noChannel = Files.createDirectories(nodeDir.resolve("no-channel"));
            List<String> config = new ArrayList<>(List.of("host=" + node, "gpus=" + o.gpusPerNode()));
            for (int g = 0; g < o.gpusPerNode(); g++) {
                // One NVLink domain: every GPU joined the same clique, so imports across nodes work.
                config.add("gpu." + g + ".fabric.state=3");
                config.add("gpu." + g + ".fabric.cluster=" + cluster);
                config.add("gpu." + g + ".fabric.clique=1");
                config.add("gpu." + g + ".fabric.summary=1");
            }
            Path cfg = nodeDir.resolve("fake.cfg");
            Files.write(cfg, config);
            for (int g = 0; g < o.gpusPerNode(); g++) {
                int index = n * o.gpusPerNode() + g;
                boolean seedNode = n == 0 && o.gpusPerNode() > 1;
                boolean channelless = n == o.nodes() - 1 && g == o.gpusPerNode() - 1 && index > 0;
                Map<String, String> env = new LinkedHashMap<>();
                env.put("IMEXPROBE_CUDA_LIBRARY", fakeLibs.resolve("libcuda.so.1").toString());
                env.put("IMEXPROBE_NVML_LIBRARY", fakeLibs.resolve("libnvidia-ml.so.1").toString());
                env.put("FAKECUDA_CONFIG", cfg.toString());
                env.put("FAKECUDA_STATE_DIR", state.toString());
                env.put("FAKECUDA_CHANNEL_DIR", (channelless ? noChannel : channels).toString());
                env.put("FAKECUDA_SAME_NODE_101", seedNode ? "1" : "0");
                env.put("CUDA_VISIBLE_DEVICES", Integer.toString(g));
                env.put("IMEXPROBE_NODE_NAME", node);
                env.put("SERVER_PORT", Integer.toString(o.port() + index));
                env.put("IMEXPROBE_AUTH_TOKEN", token);
                env.put("IMEXPROBE_PEERS_STATIC", String.join(",", all));
                env.put("IMEXPROBE_MESH_INTERVAL", o.interval().toMillis() + "ms");
                // The channel-less agent is the point of the demo: keep it in the domain, not unready.
                env.put("IMEXPROBE_READINESS_CHANNEL", "false");
                agents.add(new DemoAgent(node, g, o.port() + index, Map.copyOf(env)));
            }
        }
        return List.copyOf(agents);
    }

    private static DemoAgent troubleAgent(List<DemoAgent> agents) {
        return agents.stream().filter(a -> a.env().get("FAKECUDA_CHANNEL_DIR").endsWith("no-channel")).findFirst()
                .orElse(agents.getLast());
    }

    static boolean free(int base, int count) {
        for (int p = base; p < base + count; p++) {
            try (java.net.ServerSocket s = new java.net.ServerSocket()) {
                s.setReuseAddress(false);
                s.bind(new java.net.InetSocketAddress(p));
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    static int freeBlock(int from, int count) {
        for (int base = from; base + count < 65000; base += count) {
            if (free(base, count)) {
                return base;
            }
        }
        return -1;
    }

    /** The agents' own words when the demo fails to start: the tail of each log, before the folder goes. */
    private static void printLogs(Path root) {
        try (Stream<Path> logs = Files.list(root)) {
            for (Path log : logs.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList()) {
                List<String> lines = Files.readAllLines(log);
                System.err.println("--- " + log.getFileName() + " (last lines)");
                lines.subList(Math.max(0, lines.size() - 15), lines.size()).forEach(System.err::println);
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("demo: no agent logs to show (" + e.getMessage() + ")");
        }
    }

    private static Process start(DemoAgent a, Path root) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-Xmx160m", "-XX:TieredStopAtLevel=1",
                "-Xss512k"));
        String cp = System.getProperty("java.class.path");
        if (cp.endsWith(".jar") && !cp.contains(java.io.File.pathSeparator)) {
            cmd.addAll(List.of("-jar", cp));
        } else {
            cmd.addAll(List.of("-cp", cp, Main.class.getName()));
        }
        cmd.add("serve");
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("IMEXPROBE_") || k.startsWith("FAKECUDA_"));
        pb.environment().putAll(a.env());
        pb.redirectErrorStream(true);
        pb.redirectOutput(root.resolve("agent-" + a.node() + "-gpu" + a.gpu() + ".log").toFile());
        return pb.start();
    }

    private static void waitReady(List<DemoAgent> agents, List<Process> processes, Duration limit)
            throws InterruptedException, IOException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + limit.toNanos();
        for (int i = 0; i < agents.size(); i++) {
            while (true) {
                if (!processes.get(i).isAlive()) {
                    throw new IOException("agent " + agents.get(i).node() + " GPU " + agents.get(i).gpu()
                            + " exited; its log is beside the demo's state");
                }
                if (status(http, "http://" + agents.get(i).address() + "/actuator/health/liveness") == 200) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("agents did not start within " + limit.toSeconds() + " s");
                }
                Thread.sleep(250);
            }
        }
    }

    /** Prints a line for each finding as it first appears in the merged mesh, until the duration ends. */
    private static void watch(DemoAgent first, List<Process> processes, Options o, PrintStream out)
            throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        JsonMapper json = Json.MAPPER;
        Set<String> seen = new LinkedHashSet<>();
        long end = o.duration() == null ? Long.MAX_VALUE : System.nanoTime() + o.duration().toNanos();
        while (System.nanoTime() < end && processes.stream().allMatch(Process::isAlive)) {
            JsonNode mesh = get(http, json, "http://" + first.address() + "/v1/mesh?scope=domain");
            if (mesh != null) {
                for (JsonNode f : mesh.path("findings")) {
                    String line = "finding: " + f.path("code").asString() + " — " + f.path("cause").asString();
                    if (seen.add(line)) {
                        out.println(line);
                    }
                }
                for (JsonNode p : mesh.path("pairs")) {
                    if (!"failed".equals(p.path("state").asString())) {
                        continue;
                    }
                    JsonNode f = p.path("finding");
                    String line = String.format("finding: %s/%s → %s/%s: %s%s (stage %s, blame %s)",
                            p.path("sourceNode").asString(), shortGpu(p.path("sourceGpu").asString()),
                            p.path("targetNode").asString(), shortGpu(p.path("targetGpu").asString()),
                            p.has("cuResultName") ? p.path("cuResultName").asString() + " " : "",
                            f.path("code").asString("?"), p.path("stage").asString(), f.path("blame").asString("?"));
                    if (seen.add(line)) {
                        out.println(line);
                    }
                }
                out.flush();
            }
            Thread.sleep(Math.min(2000, Math.max(250, o.interval().toMillis())));
        }
    }

    private static String shortGpu(String uuid) {
        return uuid.startsWith("GPU-") && uuid.length() > 12 ? uuid.substring(0, 12) : uuid;
    }

    private static JsonNode get(HttpClient http, JsonMapper json, String url) {
        try {
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
            return r.statusCode() == 200 ? json.readTree(r.body()) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static int status(HttpClient http, String url) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    /**
     * Stops every agent (gracefully first, so each releases its exports) and deletes the demo's folder, the
     * fake driver's state files included. Safe to call twice.
     */
    static synchronized void stop(List<Process> processes, Path root) {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(15, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        }
        processes.clear();
        Path state = root.resolve("state");
        if (Files.isDirectory(state)) {
            // Each agent releases its exports when it stops; a file left here is memory a process did not release.
            try (Stream<Path> left = Files.list(state)) {
                System.out.println("state files left by the agents: " + left.count());
            } catch (IOException e) {
                System.err.println("demo: cannot read " + state + ": " + e.getMessage());
            }
        }
        if (Files.exists(root)) {
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                System.err.println("demo: could not remove " + root + ": " + e.getMessage());
            }
        }
    }

    private static int number(String[] args, int i, String name, int min, int max) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a number");
        }
        try {
            int v = Integer.parseInt(args[i]);
            if (v < min || v > max) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a whole number from " + min + " to " + max + ", got '"
                    + args[i] + "'");
        }
    }

    /** 20s, 500ms, 2m, or plain seconds. */
    static Duration duration(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a duration such as 20s or 2m");
        }
        String v = args[i].trim().toLowerCase(java.util.Locale.ROOT);
        try {
            Duration d;
            if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            } else {
                d = Duration.ofSeconds(Long.parseLong(v));
            }
            if (d.isNegative() || d.isZero()) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a positive duration such as 20s or 2m, got '" + args[i] + "'");
        }
    }
}
