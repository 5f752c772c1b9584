package dev.imexprobe.ladder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The launcher that builds a worker's mount namespace: its command line, and (where this process may make mount
 * namespaces) what a process inside really sees, while the host keeps its own view.
 */
class IsolationTest {

    @TempDir
    Path tmp;

    @Test
    void withoutHiddenEntriesTheWorkerStartsAsItIs() {
        List<String> worker = List.of("/jdk/bin/java", "-cp", "x", "dev.imexprobe.cli.Main", "worker");
        Isolation iso = Isolation.allVisible().withEnv("CUDA_VISIBLE_DEVICES", "GPU-a", "CUDA_VISIBLE_DEVICES=GPU-a");
        assertThat(iso.needsNamespace()).isFalse();
        assertThat(iso.command(worker, tmp)).isEqualTo(worker);
        assertThat(iso.env()).containsEntry("CUDA_VISIBLE_DEVICES", "GPU-a");
        assertThat(iso.description()).containsExactly("CUDA_VISIBLE_DEVICES=GPU-a");
    }

    @Test
    void hiddenEntriesWrapTheWorkerInUnshareAndTheLauncher() {
        List<String> worker = List.of("/jdk/bin/java", "worker");
        Isolation iso = Isolation.allVisible().hide(Path.of("/dev"), List.of("nvidia1", "nvidia2"), "hide two")
                .param(Path.of("/proc/driver/nvidia/params"), "ModifyDeviceFiles", "0", "params");
        List<String> cmd = iso.command(worker, Path.of("/tmp/stage"));
        assertThat(cmd.subList(0, 7)).containsExactly("unshare", "--mount", "--propagation", "private", "--",
                "/bin/sh", "-c");
        assertThat(cmd.get(7)).isEqualTo(Isolation.SCRIPT).contains("exec \"$@\"");
        assertThat(cmd.subList(8, cmd.size())).containsExactly("imexprobe-isolate", "/tmp/stage", "hide", "/dev", "2",
                "nvidia1", "nvidia2", "param", "/proc/driver/nvidia/params", "ModifyDeviceFiles", "0", "--",
                "/jdk/bin/java", "worker");
    }

    @Test
    void insideTheNamespaceTheHiddenEntriesAreGoneAndEverythingElseStillWorks() throws Exception {
        assumeTrue(Isolation.namespaceUnavailableReason(Files.createDirectories(tmp.resolve("check"))) == null,
                "needs CAP_SYS_ADMIN for mount namespaces");
        Path dev = Files.createDirectories(tmp.resolve("dev"));
        Files.writeString(dev.resolve("nvidia0"), "zero");
        Files.writeString(dev.resolve("nvidia1"), "one");
        Files.createDirectories(dev.resolve("sub"));
        Files.writeString(dev.resolve("sub/inner"), "kept");
        Files.createSymbolicLink(dev.resolve("link"), Path.of("nvidia0"));
        Path params = tmp.resolve("params");
        Files.writeString(params, "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nImexChannelCount: 2048\n");
        Isolation iso = Isolation.allVisible().hide(dev, List.of("nvidia1"), "hide nvidia1")
                .param(params, "ModifyDeviceFiles", "0", "params");
        Path stage = Files.createDirectories(tmp.resolve("stage"));
        String inside = run(iso.command(List.of("/bin/sh", "-c", "ls -A \"$0\"; cat \"$0/nvidia0\" \"$0/sub/inner\" "
                + "\"$0/link\"; echo; cat \"$1\"", dev.toString(), params.toString()), stage));
        assertThat(inside).isEqualTo("""
                link
                nvidia0
                sub
                zerokeptzero
                ResmanDebugLevel: 4294967295
                ModifyDeviceFiles: 0
                ImexChannelCount: 2048
                """);
        // The host's view is untouched: the mounts lived and died with that process.
        assertThat(Files.exists(dev.resolve("nvidia1"))).isTrue();
        assertThat(Files.readString(params)).contains("ModifyDeviceFiles: 1");
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain("imexprobe-ladder");
    }

    @Test
    void theLauncherRefusesToRunAWorkerHalfIsolated() throws Exception {
        assumeTrue(Isolation.namespaceUnavailableReason(Files.createDirectories(tmp.resolve("check"))) == null,
                "needs CAP_SYS_ADMIN for mount namespaces");
        Isolation iso = Isolation.allVisible().hide(tmp.resolve("missing"), List.of("x"), "hide");
        ProcessBuilder pb = new ProcessBuilder(iso.command(List.of("/bin/echo", "worker ran"),
                Files.createDirectories(tmp.resolve("stage"))));
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(97);
        assertThat(out).contains("imexprobe isolate: " + tmp.resolve("missing") + " is not a directory")
                .doesNotContain("worker ran");
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(command));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("launcher exit code, output %s", out).isZero();
        return out;
    }
}
