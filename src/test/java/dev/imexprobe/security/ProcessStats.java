package dev.imexprobe.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An agent process seen from outside, without JMX: its threads and resident memory from /proc/&lt;pid&gt;/status,
 * its thread names from /proc/&lt;pid&gt;/task/&lt;tid&gt;/comm (Linux keeps the first 15 bytes of a Java thread's
 * name), and a full GC on demand through the JDK's jcmd.
 */
record ProcessStats(long pid, int threads, long rssKiB) {

    static ProcessStats of(long pid) {
        try {
            int threads = -1;
            long rss = -1;
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("Threads:")) {
                    threads = Integer.parseInt(line.substring(8).strip());
                } else if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.substring(6).strip().split("\\s+")[0]);
                }
            }
            return new ProcessStats(pid, threads, rss);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/" + pid + "/status (is it alive?)", e);
        }
    }

    /** The names of the process's threads (each cut to 15 bytes by the kernel). */
    static List<String> threadNames(long pid) {
        List<String> names = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks.toList()) {
                try {
                    names.add(Files.readString(task.resolve("comm")).strip());
                } catch (NoSuchFileException e) {
                    // the thread ended while we looked
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }

    /** How many threads of the process carry a name starting with {@code prefix}. */
    static long threadsNamed(long pid, String prefix) {
        return threadNames(pid).stream().filter(n -> n.startsWith(prefix)).count();
    }

    /**
     * A full collection in the process (jcmd GC.run), then the heap it still uses, in KiB, from jcmd GC.heap_info;
     * -1 when jcmd is not there.
     */
    static long heapUsedAfterGcKiB(long pid) {
        Path jcmd = Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
        if (!Files.isExecutable(jcmd)) {
            return -1;
        }
        run(jcmd.toString(), Long.toString(pid), "GC.run");
        String info = run(jcmd.toString(), Long.toString(pid), "GC.heap_info");
        // Serial: " def new generation   total 9792K, used 1234K [...", " tenured generation   total 21888K, used 5678K"
        long used = 0;
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("used (\\d+)K").matcher(info);
        boolean any = false;
        while (m.find()) {
            used += Long.parseLong(m.group(1));
            any = true;
        }
        if (!any) {
            throw new IllegalStateException("no heap figures in jcmd GC.heap_info of " + pid + ":\n" + info);
        }
        return used;
    }

    private static String run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
