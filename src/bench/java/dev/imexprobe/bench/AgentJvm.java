package dev.imexprobe.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An agent ({@code serve}) in its own JVM, as it runs in production: how long it took to become ready (process
 * start → /actuator/health/readiness 200), and what it costs while it runs (process CPU time and resident memory
 * from /proc). Every process started here is stopped at exit, also on Ctrl-C. The bench and the tests' agents
 * ({@code dev.imexprobe.testing.AgentProcess}) both start theirs here; it lives in the bench's sources because
 * the bench jar must run with only a Java runtime, and the tests compile against those classes too.
 */
public final class AgentJvm implements AutoCloseable {

    private static final List<Process> STARTED = new CopyOnWriteArrayList<>();
    private static final Pattern MAPPING_HEADER = Pattern.compile("[0-9a-f]+-[0-9a-f]+ ");
    private static final long CLOCK_TICKS = 100; // USER_HZ: 100 on every Linux the agent runs on

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> STARTED.forEach(Process::destroy), "bench-stop-agents"));
    }

    private final String name;
    private final Process process;
    private final int port;
    private final long startNanos;
    private final Path log;
    private volatile long readyNanos = -1;

    private AgentJvm(String name, Process process, int port, long startNanos, Path log) {
        this.name = name;
        this.process = process;
        this.port = port;
        this.startNanos = startNanos;
        this.log = log;
    }

    /** java [jvmFlags] -jar jar serve, with the bench's environment plus {@code env}; its log agent-NAME.log. */
    static AgentJvm start(String name, String java, Path jar, List<String> jvmFlags, Map<String, String> env,
                          int port, Path logDir) throws IOException {
        Path log = logDir.resolve("agent-" + name + ".log");
        Files.deleteIfExists(log);
        return start(name, java, jar, jvmFlags, env, k -> false, port, log);
    }

    /**
     * java [jvmFlags] -jar jar serve on {@code port}, with this process's environment less the variables
     * {@code dropInherited} names, plus {@code env}; stdout and stderr appended to {@code log}.
     */
    public static AgentJvm start(String name, String java, Path jar, List<String> jvmFlags, Map<String, String> env,
                                 Predicate<String> dropInherited, int port, Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmFlags);
        cmd.add("-jar");
        cmd.add(jar.toString());
        cmd.add("serve");
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(dropInherited);
        pb.environment().putAll(env);
        pb.environment().put("SERVER_PORT", Integer.toString(port));
        pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        long start = System.nanoTime();
        Process p = pb.start();
        STARTED.add(p);
        return new AgentJvm(name, p, port, start, log);
    }

    /** Child JVMs for other commands (the worker), stopped at exit like agents. */
    static Process track(Process p) {
        STARTED.add(p);
        return p;
    }

    static void untrack(Process p) {
        STARTED.remove(p);
    }

    /** Polls readiness every 10 ms; returns seconds from process start to the first 200. */
    public double awaitReady(Duration timeout) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        URI uri = URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness");
        long deadline = System.nanoTime() + timeout.toNanos();
        try (client) {
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    throw new IOException("agent " + name + " exited with " + process.exitValue() + " before it was ready; "
                            + "log: " + log + "\n" + tail());
                }
                try {
                    HttpResponse<Void> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding());
                    if (r.statusCode() == 200) {
                        readyNanos = System.nanoTime();
                        return (readyNanos - startNanos) / 1e9;
                    }
                } catch (ConnectException e) {
                    // not listening yet
                } catch (IOException e) {
                    // starting up
                }
                Thread.sleep(10);
            }
        }
        throw new IOException("agent " + name + " not ready within " + timeout.toSeconds() + " s; log: " + log + "\n" + tail());
    }

    double readySeconds() {
        return readyNanos < 0 ? Double.NaN : (readyNanos - startNanos) / 1e9;
    }

    public int port() {
        return port;
    }

    String address() {
        return "127.0.0.1:" + port;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** The exit code; only once {@link #alive} is false. */
    public int exitValue() {
        return process.exitValue();
    }

    /** User + system CPU seconds of the whole process so far (threads that ended included). */
    double cpuSeconds() throws IOException {
        double[] us = cpuUserSystemSeconds();
        return us[0] + us[1];
    }

    /** User and system CPU seconds of the whole process so far. */
    double[] cpuUserSystemSeconds() throws IOException {
        return userSystemSeconds(Files.readString(Path.of("/proc/" + pid() + "/stat")));
    }

    /** utime and stime of a /proc stat line (a process's or a thread's), in seconds. */
    private static double[] userSystemSeconds(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after "pid (comm) ": state is field 3; utime and stime are fields 14 and 15 → indices 11 and 12 here
        return new double[] {Long.parseLong(f[11]) / (double) CLOCK_TICKS, Long.parseLong(f[12]) / (double) CLOCK_TICKS};
    }

    /** VmRSS and VmHWM in MiB. */
    double[] memoryMiB() throws IOException {
        double rss = Double.NaN;
        double hwm = Double.NaN;
        for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = kib(line) / 1024.0;
            } else if (line.startsWith("VmHWM:")) {
                hwm = kib(line) / 1024.0;
            }
        }
        return new double[] {rss, hwm};
    }

    /**
     * Where the resident memory is: RssAnon / RssFile / RssShmem of /proc/PID/status, and the mappings holding the
     * most of it (/proc/PID/smaps, grouped by file; anonymous mappings together), largest first.
     */
    Map<String, Object> memoryBreakdown(int largest) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
            for (String key : List.of("RssAnon", "RssFile", "RssShmem")) {
                if (line.startsWith(key + ":")) {
                    m.put(Character.toLowerCase(key.charAt(0)) + key.substring(1) + "MiB", Stats.round(kib(line) / 1024.0));
                }
            }
        }
        Map<String, Long> byMapping = new HashMap<>();
        String mapping = "[anonymous]";
        for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/smaps"))) {
            if (MAPPING_HEADER.matcher(line).lookingAt()) {
                String[] f = line.trim().split("\\s+", 6);
                mapping = f.length == 6 && !f[5].isBlank() ? f[5].trim() : "[anonymous]";
            } else if (line.startsWith("Rss:")) {
                byMapping.merge(mapping, kib(line), Long::sum);
            }
        }
        Map<String, Object> top = new LinkedHashMap<>();
        byMapping.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(largest)
                .forEach(e -> top.put(e.getKey(), Stats.round(e.getValue() / 1024.0)));
        m.put("largestMappingsMiB", top);
        return m;
    }

    /**
     * CPU seconds (user + system) of each live thread of the agent, by thread id, with its kernel name (the first 15
     * characters of the Java name). {@link ThreadLedger} turns readings into CPU by name over a window.
     */
    Map<Integer, ThreadLedger.Reading> cpuSecondsByThread() throws IOException {
        Map<Integer, ThreadLedger.Reading> byTid = new HashMap<>();
        List<Path> tasks;
        try (var list = Files.list(Path.of("/proc/" + pid() + "/task"))) {
            tasks = list.toList();
        }
        for (Path task : tasks) {
            String stat;
            try {
                stat = Files.readString(task.resolve("stat"));
            } catch (IOException ended) {
                continue;
            }
            double[] us = userSystemSeconds(stat);
            byTid.put(Integer.valueOf(task.getFileName().toString()), new ThreadLedger.Reading(
                    stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')), us[0] + us[1]));
        }
        return byTid;
    }

    /** The body of GET {@code path} on the agent; an IOException for any status but 200. */
    public String get(String path) throws IOException, InterruptedException {
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://" + address() + path))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException(path + " of " + address() + " answered " + r.statusCode());
            }
            return r.body();
        }
    }

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)$");

    /**
     * Sums the samples of {@code name} in a Prometheus text exposition whose labels include every given pair
     * ({@code "area", "heap"}); others may exist. NaN when none matches.
     */
    public static double sample(String exposition, String name, String... labels) {
        double sum = 0;
        boolean found = false;
        for (String line : exposition.split("\n")) {
            Matcher m = SAMPLE.matcher(line.strip());
            if (line.startsWith("#") || !m.matches() || !m.group(1).equals(name)) {
                continue;
            }
            String ls = m.group(3) == null ? "" : m.group(3);
            boolean all = true;
            for (int i = 0; i < labels.length; i += 2) {
                all &= ls.contains(labels[i] + "=\"" + labels[i + 1] + "\"");
            }
            if (all) {
                sum += Double.parseDouble(m.group(4));
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }

    int threads() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.substring(8).trim());
            }
        }
        return -1;
    }

    private static long kib(String line) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }

    String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    /** A port nothing listens on right now. */
    /**
     * A port free now for an agent to listen on, below the kernel's ephemeral range: an outgoing connection takes
     * its local port from that range, and so does a bind to port 0, so a port chosen there could be taken by some
     * client's connection before the agent binds it (seen once: "Port 36259 was already in use" in a fresh clone).
     * Never the same port twice in this JVM, so agents chosen before any of them binds do not share one.
     */
    public static int freePort() {
        int low = ephemeralLow();
        for (int i = 0; low - FIRST_PORT >= 1000 && i < 200; i++) {
            int p = FIRST_PORT + java.util.concurrent.ThreadLocalRandom.current().nextInt(low - FIRST_PORT);
            if (!HANDED_OUT.contains(p) && bindable(p) && HANDED_OUT.add(p)) {
                return p;
            }
        }
        try (ServerSocket s = new ServerSocket(0)) { // a node whose ephemeral range leaves no room below it
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final int FIRST_PORT = 20000;
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The first port of the ephemeral range (Linux's default 32768 when it cannot be read). */
    static int ephemeralLow() {
        try {
            // readAllLines, not readString: on this procfs file readString returned only its first byte ("3")
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).getFirst().trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new java.net.InetSocketAddress(port)); // the wildcard: taken on any address, it fails here
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Stops several agents at once: all get SIGTERM first, then each is waited for as {@link #close} does. */
    static void closeAll(List<AgentJvm> agents) {
        agents.forEach(a -> a.process.destroy());
        agents.forEach(AgentJvm::close);
    }

    /** SIGKILL, as a crash or an OOM kill would end it; waits until it is gone. */
    public void kill() {
        process.destroyForcibly();
        waitFor(Duration.ofSeconds(30));
        STARTED.remove(process);
    }

    /** SIGTERM (graceful: exports are released), then SIGKILL after 30 s. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            if (!waitFor(Duration.ofSeconds(30))) {
                kill();
            }
        }
        STARTED.remove(process);
    }

    private boolean waitFor(Duration d) {
        try {
            return process.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
