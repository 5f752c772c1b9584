package dev.imexprobe.node;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs nvidia-imex-ctl under a hard time bound. The tool is known to hang (e.g. when the daemon's command port
 * does not answer), so every call is killed with its whole process tree once the bound passes, and its output is
 * drained on separate threads so a full pipe can never stall it or us.
 */
final class ImexCtl {

    /** Output beyond this is drained and dropped: -N -j for a large domain is a few KiB, a runaway tool is not. */
    static final int OUTPUT_CAP = 256 * 1024;
    /** After the kill: how long to wait for the process to be reaped and the readers to see end of file. */
    private static final Duration REAP = Duration.ofMillis(500);

    private final Path executable;
    private final Duration timeout;
    private final List<String> configArgs;

    /**
     * @param config passed as {@code -c <config>} unless it is the tool's own default, so a moved config is honoured
     */
    ImexCtl(Path executable, Path config, Duration timeout) {
        this.executable = executable;
        this.timeout = timeout;
        this.configArgs = config.equals(NodeInspectorSettings.DEFAULT_IMEX_CONFIG)
                ? List.of() : List.of("-c", config.toString());
    }

    /** {@code -q}: prints READY when the local daemon is ready. */
    ImexCtlRun query() {
        return run("-q");
    }

    /** {@code -N -j}: the whole domain's status as JSON. */
    ImexCtlRun domainStatus() {
        return run("-N", "-j");
    }

    private ImexCtlRun run(String... args) {
        List<String> command = new ArrayList<>();
        command.add(executable.toString());
        command.addAll(configArgs);
        command.addAll(List.of(args));
        return run(command, timeout);
    }

    static ImexCtlRun run(List<String> command, Duration timeout) {
        long start = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().put("LC_ALL", "C"); // stable, untranslated words to match (READY)
        Process process;
        try {
            process = builder.start();
        } catch (IOException | SecurityException e) {
            return new ImexCtlRun(command, null, null, "", "", false, seconds(start),
                    "cannot start " + command.getFirst() + ": " + DeviceFile.describe(e)
                            + "; check that it exists and is executable");
        }
        Drain out = Drain.start(process.getInputStream(), "imex-ctl-stdout");
        Drain err = Drain.start(process.getErrorStream(), "imex-ctl-stderr");
        boolean finished;
        String error = null;
        try {
            finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            finished = false;
            error = "interrupted while waiting for " + command.getFirst() + "; it was killed";
        }
        if (!finished) {
            killTree(process);
        }
        // Bounded joins: a grandchild that escaped the kill may hold the pipe open; take what arrived.
        out.join(REAP);
        err.join(REAP);
        Integer exitCode = finished ? process.exitValue() : null;
        return new ImexCtlRun(command, process.pid(), exitCode, out.text(), err.text(),
                !finished && error == null, seconds(start), error);
    }

    /** Kills the process and every descendant, snapshotted first because children re-parent once it dies. */
    static void killTree(Process process) {
        List<ProcessHandle> descendants = process.descendants().toList();
        process.destroyForcibly();
        descendants.forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(REAP.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** Reads one stream to its end on a virtual thread, keeping the first {@link #OUTPUT_CAP} bytes. */
    private static final class Drain implements Runnable {
        private final InputStream in;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private Thread thread;

        private Drain(InputStream in) {
            this.in = in;
        }

        static Drain start(InputStream in, String name) {
            Drain drain = new Drain(in);
            drain.thread = Thread.ofVirtual().name(name).start(drain);
            return drain;
        }

        @Override
        public void run() {
            byte[] buffer = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    synchronized (kept) {
                        int room = OUTPUT_CAP - kept.size();
                        if (room > 0) {
                            kept.write(buffer, 0, Math.min(n, room));
                        }
                    }
                }
            } catch (IOException e) {
                // The pipe closed under us (process killed): what was read is kept.
            }
        }

        void join(Duration bound) {
            try {
                thread.join(bound);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        String text() {
            synchronized (kept) {
                return kept.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
