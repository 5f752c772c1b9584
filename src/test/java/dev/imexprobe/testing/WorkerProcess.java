package dev.imexprobe.testing;

import dev.imexprobe.json.Json;
import dev.imexprobe.ladder.WorkerRequest;

import tools.jackson.databind.JsonNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A `worker` process (the ladder's) on a fake machine, driven line by line: real JVM, real JNI, real
 * dlopen of the fake driver. Started from the test class path, so it needs no jar.
 */
public final class WorkerProcess implements AutoCloseable {

    private final Process process;
    private final PrintWriter in;
    private final BufferedReader out;

    private WorkerProcess(Process process) {
        this.process = process;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    public static WorkerProcess start(Map<String, String> env, Path logFile) {
        return start(env, logFile, 0);
    }

    /** As {@link #start(Map, Path)}, with a driver deadline of {@code driverTimeoutSeconds} (0: the worker's 5 s). */
    public static WorkerProcess start(Map<String, String> env, Path logFile, int driverTimeoutSeconds) {
        List<String> cmd = new ArrayList<>(List.of(NativeBuild.java(), "--enable-native-access=ALL-UNNAMED",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", System.getProperty("java.class.path"),
                "dev.imexprobe.cli.Main", "worker"));
        if (driverTimeoutSeconds > 0) {
            cmd.add("--timeout=" + driverTimeoutSeconds);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        pb.redirectError(logFile.toFile());
        try {
            return new WorkerProcess(pb.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends one of the ladder's requests; the answer as it travels, for asserting on the wire's fields. */
    public JsonNode request(WorkerRequest<?> request) {
        in.println(Json.MAPPER.writeValueAsString(request));
        try {
            String line = out.readLine();
            if (line == null) {
                throw new IllegalStateException("worker exited (code " + (process.isAlive() ? "?" : process.exitValue())
                        + ") without answering " + request);
            }
            return Json.MAPPER.readTree(line);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public long pid() {
        return process.pid();
    }

    /** Kills the process at once, as a crash would. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            in.println(Json.MAPPER.writeValueAsString(new WorkerRequest.Exit()));
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
