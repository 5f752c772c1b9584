package dev.imexprobe.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fake driver's own rules, checked in C across fork()ed processes (native/test/fake_selftest.c): it must
 * behave as the H200 was measured to, or every other test here proves nothing.
 */
class FakeDriverSelfTest {

    @Test
    void fakeDriverFollowsTheMeasuredRules() throws Exception {
        Path out = Path.of("target", "fake-selftest").toAbsolutePath();
        ProcessBuilder pb = new ProcessBuilder("make", "-s", "-C", "native", "fake-selftest", "OUT=" + out);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).containsPattern("fake-selftest: [0-9]{3,} checks, 0 failed");
        assertThat(output).doesNotContain("FAIL ");
    }
}
