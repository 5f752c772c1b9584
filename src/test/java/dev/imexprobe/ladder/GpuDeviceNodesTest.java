package dev.imexprobe.ladder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which /dev/nvidiaN is which GPU: the device minor on the real driver, the order of FAKECUDA_DEV_DIR on the fake. */
class GpuDeviceNodesTest {

    @TempDir
    Path tmp;

    private static final List<GpuDeviceNodes.Gpu> TWO = List.of(new GpuDeviceNodes.Gpu(0, "GPU-a", "0000:18:00.0"),
            new GpuDeviceNodes.Gpu(1, "GPU-b", "0000:2A:00.0"));

    @Test
    void busIdsAreComparedInOneSpelling() {
        assertThat(GpuDeviceNodes.canonicalBusId("0000:2A:00.0")).isEqualTo("00000000:2a:00.0");
        assertThat(GpuDeviceNodes.canonicalBusId("00000000:2a:00.0")).isEqualTo("00000000:2a:00.0");
        assertThat(GpuDeviceNodes.canonicalBusId("0001:9A:00.0")).isEqualTo("00000001:9a:00.0");
        assertThat(GpuDeviceNodes.canonicalBusId("not-a-bus")).isNull();
        assertThat(GpuDeviceNodes.canonicalBusId(null)).isNull();
    }

    @Test
    void realDriverTakesTheMinorFromProcNotTheOrdinal() throws IOException {
        // Minors in the opposite order of the CUDA ordinals, as on boards where enumeration differs.
        info("0000:18:00.0", 5);
        info("0000:2a:00.0", 2);
        GpuDeviceNodes map = GpuDeviceNodes.real(tmp, TWO);
        assertThat(map.problem()).isNull();
        assertThat(map.nodes()).containsEntry("GPU-a", "nvidia5").containsEntry("GPU-b", "nvidia2");
        assertThat(map.procEntries()).containsEntry("GPU-a", "0000:18:00.0").containsEntry("GPU-b", "0000:2a:00.0");
    }

    @Test
    void aGpuWithoutProcEntryOrMinorLineIsAProblemNotAGuess() throws IOException {
        info("0000:18:00.0", 0);
        assertThat(GpuDeviceNodes.real(tmp, TWO).problem()).contains("no entry for its bus id 0000:2A:00.0");
        Files.createDirectories(tmp.resolve("0000:2a:00.0"));
        Files.writeString(tmp.resolve("0000:2a:00.0/information"), "Model: NVIDIA H200\n");
        assertThat(GpuDeviceNodes.real(tmp, TWO).problem()).contains("has no 'Device Minor:' line");
        assertThat(GpuDeviceNodes.real(tmp.resolve("absent"), TWO).problem()).contains("is missing or empty");
    }

    @Test
    void fakeMapsTheKthNodeByNumberToOrdinalK() throws IOException {
        Files.writeString(tmp.resolve("nvidia10"), "");
        Files.writeString(tmp.resolve("nvidia2"), "");
        Files.writeString(tmp.resolve("nvidia-uvm"), "");
        GpuDeviceNodes map = GpuDeviceNodes.fake(tmp, TWO);
        assertThat(map.nodes()).containsEntry("GPU-a", "nvidia2").containsEntry("GPU-b", "nvidia10");
        Files.delete(tmp.resolve("nvidia10"));
        assertThat(GpuDeviceNodes.fake(tmp, TWO).problem()).contains("holds 1 for 2 GPUs");
    }

    private void info(String bus, int minor) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(bus));
        Files.writeString(dir.resolve("information"), "Model: \t\t NVIDIA H200\nIRQ:   \t\t 123\nGPU UUID: \t\t GPU-x\n"
                + "Video BIOS: \t\t 96.00.a5.00.01\nBus Type: \t\t PCIe\nDMA Size: \t\t 52 bits\nDevice Minor: \t\t "
                + minor + "\nBus Location: \t\t " + bus + "\n");
    }
}
