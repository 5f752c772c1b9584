package dev.imexprobe.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Compiles native/test/abi_check against our hand-written headers and the real cuda.h (and nvml.h where one
 * is installed) and runs it: a constant, size or offset that differs fails the build.
 */
class AbiCheckTest {

    @Test
    void ourDeclarationsMatchTheVendorHeaders() throws Exception {
        Path header = CuResultTableTest.cudaHeader();
        assumeTrue(header != null, "no cuda.h installed: the ABI is checked where the toolkit is");
        Path out = Path.of("target", "abi-check").toAbsolutePath();
        ProcessBuilder pb = new ProcessBuilder("make", "-s", "-C", "native", "abi-check", "OUT=" + out,
                "CUDA_INCLUDE=" + header.getParent());
        Path nvml = header.getParent().resolve("nvml.h");
        if (Files.isRegularFile(nvml)) {
            pb.command().add("NVML_INCLUDE=" + header.getParent());
        }
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).contains("cuda: ").contains(" 0 mismatches").doesNotContain("MISMATCH");
        assertThat(output).containsPattern("cuda: [6-9][0-9] entries");
    }
}
