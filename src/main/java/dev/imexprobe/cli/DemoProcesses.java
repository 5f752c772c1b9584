package dev.imexprobe.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** The demo's agent processes: started with their environments, awaited until live, stopped and cleaned up. */
final class DemoProcesses {

    private DemoProcesses() {
    }

    /** The agents' own words when the demo fails to start: the tail of each log, before the folder goes. */
    static void printLogs(Path root) {
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

    static Process start(DemoDomain.DemoAgent a, Path root) throws IOException {
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
        pb.redirectOutput(root.resolve("agent-" + a.node() + (a.gpu() < 0 ? "" : "-gpu" + a.gpu()) + ".log").toFile());
        return pb.start();
    }

    static void waitReady(List<DemoDomain.DemoAgent> agents, List<Process> processes, Duration limit)
            throws InterruptedException, IOException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + limit.toNanos();
        for (int i = 0; i < agents.size(); i++) {
            while (true) {
                if (!processes.get(i).isAlive()) {
                    throw new IOException("agent " + agents.get(i).name()
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

    /** How long the agents get to stop gracefully, together, before they are killed. */
    static final java.time.Duration STOP_WAIT = java.time.Duration.ofSeconds(30);

    /**
     * Stops every agent (gracefully first, so each releases its exports) and deletes the demo's folder, the
     * fake driver's state files included. Safe to call twice.
     */
    static synchronized void stop(List<Process> processes, Path root) {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
        }
        // One deadline for all (they stop in parallel), longer than an agent's own graceful stop can take: the web
        // server's phase (spring.lifecycle.timeout-per-shutdown-phase, 15 s) and the mesh's (5 s) come one after
        // the other. An agent killed before it finished would leave its exports behind.
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        for (Process p : processes) {
            try {
                if (!p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    System.out.println("demo: agent pid " + p.pid() + " did not stop within " + STOP_WAIT.toSeconds()
                            + " s of SIGTERM; killed (what it still held is left in the state folder)");
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
            try (Stream<Path> files = Files.list(state)) {
                List<String> left = files.map(f -> f.getFileName().toString()).sorted().toList();
                System.out.println("state files left by the agents: " + left.size()
                        + (left.isEmpty() ? "" : " " + left)); // which process and allocation, when one is left
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
}
