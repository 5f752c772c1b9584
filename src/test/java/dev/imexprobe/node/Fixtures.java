package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/** Fixture trees for node inspection: fake /proc, /dev, channel directories and nvidia-imex-ctl scripts. */
final class Fixtures {

    private Fixtures() {
    }

    static Path write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** A /proc/devices in the kernel's format; {@code imexMajor} null leaves the IMEX line out. */
    static String procDevices(Integer imexMajor) {
        StringBuilder sb = new StringBuilder("Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n"
                + " 10 misc\n195 nvidia-frontend\n");
        if (imexMajor != null) {
            sb.append(String.format("%3d %s%n", imexMajor, "nvidia-caps-imex-channels"));
        }
        sb.append("508 nvidia-uvm\n509 nvidia-caps\n\nBlock devices:\n  7 loop\n");
        if (imexMajor != null) {
            // Same number as a block major must not be mistaken for the character one.
            sb.append(String.format("%3d %s%n", imexMajor + 1, "nvidia-caps-imex-channels"));
        }
        return sb.toString();
    }

    static Path executable(Path file, String script) throws IOException {
        write(file, script);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /**
     * A fake nvidia-imex-ctl: {@code -q} prints {@code q.out} and exits with {@code q.rc}; {@code -N} prints
     * {@code n.out}. Every call appends its argv to {@code args.log}.
     */
    static Path fakeCtl(Path dir, String queryOutput, int queryExit, String domainOutput) throws IOException {
        Files.createDirectories(dir);
        write(dir.resolve("q.out"), queryOutput);
        write(dir.resolve("n.out"), domainOutput);
        return executable(dir.resolve("nvidia-imex-ctl"), """
                #!/bin/sh
                D='%s'
                echo "$*" >> "$D/args.log"
                for a in "$@"; do
                  case "$a" in
                    -q) cat "$D/q.out"; exit %d ;;
                    -N) cat "$D/n.out"; exit 0 ;;
                  esac
                done
                echo "usage: nvidia-imex-ctl ..." >&2
                exit 2
                """.formatted(dir, queryExit));
    }

    /** A fake nvidia-imex-ctl that never answers: it starts a child and waits, recording "pid childpid". */
    static Path hangingCtl(Path dir) throws IOException {
        Files.createDirectories(dir);
        return executable(dir.resolve("nvidia-imex-ctl"), """
                #!/bin/sh
                sleep 100000 &
                echo "$$ $!" >> '%s/pids'
                wait
                """.formatted(dir));
    }

    static List<Long> recordedPids(Path dir, int expectedLines) throws Exception {
        Path file = dir.resolve("pids");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            if (Files.exists(file) && Files.readAllLines(file).size() >= expectedLines) {
                break;
            }
            Thread.sleep(20);
        }
        List<Long> pids = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            for (String pid : line.strip().split("\\s+")) {
                pids.add(Long.parseLong(pid));
            }
        }
        return pids;
    }

    /** Alive and not a zombie (a killed orphan waits as a zombie until its reaper gets to it). */
    static boolean running(long pid) {
        Path stat = Path.of("/proc/" + pid + "/stat");
        try {
            String text = Files.readString(stat);
            char state = text.charAt(text.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException e) {
            return false;
        }
    }

    static boolean runningWithin(long pid, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (running(pid) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return running(pid);
    }

    /** mknod path c major minor, as root; false when not permitted here. */
    static boolean mknod(Path path, int major, int minor) throws IOException, InterruptedException {
        Files.createDirectories(path.getParent());
        Process p = new ProcessBuilder("mknod", path.toString(), "c", Integer.toString(major),
                Integer.toString(minor)).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    /** Creates the node or skips the calling test (no CAP_MKNOD, or a nodev mount). */
    static void mknodOrSkip(Path path, int major, int minor) throws IOException, InterruptedException {
        Assumptions.assumeTrue(mknod(path, major, minor),
                "mknod not permitted here (needs root with CAP_MKNOD); char-device fixtures skipped");
    }

    /**
     * Majors from the kernel's local/experimental ranges (60-63, 120-127, 240-254) that this kernel has not
     * registered: open(2) of a node with one of them fails with ENXIO, which makes "exists but cannot be opened"
     * reproducible as root (chmod 000 does not stop root).
     */
    static List<Integer> unregisteredMajors() throws IOException {
        Set<Integer> registered = new TreeSet<>(
                ProcDevices.parse(Files.readString(Path.of("/proc/devices"))).characterMajors().values());
        List<Integer> free = new ArrayList<>();
        for (int[] range : new int[][] {{60, 63}, {120, 127}, {240, 254}}) {
            for (int m = range[0]; m <= range[1]; m++) {
                if (!registered.contains(m)) {
                    free.add(m);
                }
            }
        }
        assertThat(free).as("no unregistered experimental major on this kernel").isNotEmpty();
        return free;
    }

    static int pick(Random random, List<Integer> from) {
        return from.get(random.nextInt(from.size()));
    }

    /** Settings with every root inside {@code root}, no ctl on the search path, a short ctl bound. */
    static NodeInspectorSettings settings(Path root) {
        return new NodeInspectorSettings(root.resolve("proc"), root.resolve("dev"),
                root.resolve("dev/nvidia-caps-imex-channels"), root.resolve("etc/nvidia-imex/config.cfg"), null,
                List.of(root.resolve("no-bin")), Duration.ofSeconds(3), Map.of());
    }
}
