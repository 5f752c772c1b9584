package dev.imexprobe.bench;

import dev.imexprobe.testing.NativeBuild;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bash bench/run.sh --quick} on the fake driver with this build's Java and jar, as the bench ITs run it. */
final class QuickBench {

    private QuickBench() {
    }

    /**
     * Runs it with {@code extra} arguments, its temporary files in {@code tmp}, its figures to {@code out} and its
     * output to {@code log}; what it printed, once it finished within {@code limit} and exited 0.
     */
    static String run(Path tmp, Path out, Path log, Duration limit, String... extra) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", "bench/run.sh", "--quick", "--driver", "fake",
                "--java", NativeBuild.java(), "--jar", NativeBuild.jar().toString(), "--out", out.toString()));
        cmd.addAll(List.of(extra));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("TMPDIR", tmp.toString());
        Process p = pb.start();
        boolean finished = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
        if (!finished) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroyForcibly();
        }
        String printed = read(log);
        assertThat(finished).as("%s finished; output:%n%s", cmd, printed).isTrue();
        assertThat(p.exitValue()).as("exit code of %s; output:%n%s", cmd, printed).isZero();
        return printed;
    }

    private static String read(Path log) throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }
}
