package dev.imexprobe.ladder;

import dev.imexprobe.json.Json;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code worker} process as the ladder drives it: a request line out, one answer line back, each answer
 * awaited for a bounded time. A worker that does not answer in time is killed; one that exits is reported with
 * the end of its log (its stderr), which is where the launcher, the JVM and the driver explain themselves.
 */
final class LadderWorker implements AutoCloseable {

    /** A worker that could not be started or did not answer: the ladder's own trouble, not a driver result. */
    static final class WorkerFailure extends Exception {
        WorkerFailure(String message) {
            super(message);
        }
    }

    private static final String EOF = "\u0000eof";

    private final String name;
    private final Process process;
    private final PrintWriter in;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;

    private LadderWorker(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        // One reader per worker: the answer must be awaited with a deadline, which a blocking readLine has not.
        Thread.ofVirtual().name("ladder-" + name).start(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // The process is gone; EOF below says so.
            }
            lines.add(EOF);
        });
    }

    static LadderWorker start(String name, List<String> command, Map<String, String> env, Path log)
            throws WorkerFailure {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.redirectError(log.toFile());
        try {
            return new LadderWorker(name, pb.start(), log);
        } catch (IOException e) {
            throw new WorkerFailure("the " + name + " worker could not be started (" + command.getFirst() + "): "
                    + e.getMessage());
        }
    }

    String name() {
        return name;
    }

    /** Sends one request and waits for its answer; kills the worker when none comes in time. */
    <R extends WorkerReply> R request(WorkerRequest<R> request, Duration timeout) throws WorkerFailure {
        String op = request.op();
        if (!process.isAlive() && lines.isEmpty()) {
            throw new WorkerFailure(exited(op));
        }
        in.println(Json.MAPPER.writeValueAsString(request));
        String line;
        try {
            line = lines.poll(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            throw new WorkerFailure("interrupted while waiting for the " + name + " worker");
        }
        if (line == null) {
            kill();
            throw new WorkerFailure("the " + name + " worker did not answer '" + op + "' within "
                    + timeout.toSeconds() + " s and was killed" + tail());
        }
        if (line.equals(EOF)) {
            lines.add(EOF);
            throw new WorkerFailure(exited(op));
        }
        try {
            return Json.MAPPER.readValue(line, request.replyType());
        } catch (RuntimeException e) {
            throw new WorkerFailure("the " + name + " worker answered '" + op + "' with something that is not its "
                    + "answer: " + (line.length() > 200 ? line.substring(0, 200) + "…" : line));
        }
    }

    private String exited(String op) {
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "the " + name + " worker exited" + (process.isAlive() ? "" : " with code " + process.exitValue())
                + " before answering '" + op + "'" + tail();
    }

    /** The last lines of the worker's stderr, for a message that names the cause. */
    String tail() {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                    .filter(l -> !l.isBlank() && !l.startsWith("WARNING:")).toList();
            if (all.isEmpty()) {
                return "";
            }
            String text = String.join(" | ", all.subList(Math.max(0, all.size() - 4), all.size()));
            return "; its log ends: " + (text.length() > 600 ? "…" + text.substring(text.length() - 600) : text);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Asks the worker to exit (it releases what it holds), and kills it if it does not. */
    @Override
    public void close() {
        if (process.isAlive()) {
            in.println(Json.MAPPER.writeValueAsString(new WorkerRequest.Exit()));
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    kill();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                kill();
            }
        }
    }
}
