package dev.imexprobe.ship;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Finds and runs the external tools some tests need (promtool, npx, the cross compiler). */
final class Tools {

    private Tools() {
    }

    /** The executable on PATH, if any. */
    static Optional<Path> onPath(String name) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    record Result(int exitCode, String output) {
    }

    /** Runs a command to completion (stdout and stderr together), failing the test on a timeout. */
    static Result run(Path workDir, long timeoutSeconds, List<String> command) throws IOException, InterruptedException {
        return run(workDir, timeoutSeconds, command, java.util.Map.of());
    }

    /** As {@link #run(Path, long, List)}, with {@code env} added to (or, for an empty value, removed from) ours. */
    static Result run(Path workDir, long timeoutSeconds, List<String> command, java.util.Map<String, String> env)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        pb.environment().put("NO_COLOR", "1");
        env.forEach((k, v) -> {
            if (v.isEmpty()) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        Process p = pb.start();
        p.getOutputStream().close();
        // Drain output on its own thread so a chatty tool never blocks on a full pipe and a hung one still times out.
        var out = new java.io.ByteArrayOutputStream();
        Thread drain = Thread.ofVirtual().start(() -> {
            try (var in = p.getInputStream()) {
                in.transferTo(out);
            } catch (IOException ignored) {
                // the process went away; what was read is kept
            }
        });
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish within " + timeoutSeconds + " s:\n" + out);
        }
        drain.join(5_000);
        return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8));
    }
}
