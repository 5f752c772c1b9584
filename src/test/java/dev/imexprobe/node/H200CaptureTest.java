package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real files, copied verbatim from the H200 host (driver 580.159.04, one GPU, no channel node, no IMEX
 * daemon) into src/test/resources/dev/imexprobe/node/h200: the parsers must read what the module really writes,
 * not only our fixtures.
 */
class H200CaptureTest {

    @TempDir
    Path root;

    private void copy(String resource, Path target) throws Exception {
        Files.createDirectories(target.getParent());
        try (InputStream in = getClass().getResourceAsStream("h200/" + resource)) {
            assertThat(in).as("test resource h200/%s", resource).isNotNull();
            Files.copy(in, target);
        }
    }

    @Test
    void readsTheModulesOwnFiles() throws Exception {
        copy("devices", root.resolve("proc/devices"));
        copy("params", root.resolve("proc/driver/nvidia/params"));
        copy("version", root.resolve("proc/driver/nvidia/version"));
        copy("information", root.resolve("proc/driver/nvidia/gpus/0000:00:06.0/information"));

        NodeFacts facts = new NodeInspector(Fixtures.settings(root)).inspect();

        // 195 is listed twice there ("nvidia", "nvidiactl"); the IMEX major is its own line.
        assertThat(facts.imexChannels().expectedMajor()).isEqualTo(242);
        assertThat(facts.imexChannels().exists()).isFalse(); // no channel node at boot, as measured
        assertThat(facts.imexChannels().error()).isNull();
        DriverParams params = facts.driverParams();
        assertThat(params.imexChannelCount()).isEqualTo(2048);
        assertThat(params.createImexChannel0()).isZero();
        assertThat(params.driverVersion()).isEqualTo("580.159.04");
        assertThat(params.version()).startsWith("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64");
        assertThat(params.gpus()).containsExactly(new DriverParams.GpuInformation("0000:00:06.0", "NVIDIA H200",
                "GPU-a745850b-94b5-5d37-c8f5-220caedae7e8", 0, null));
        assertThat(params.error()).isNull();
    }
}
