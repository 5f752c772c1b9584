package dev.imexprobe.cuda;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.Severity;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rule that keeps the agent's context off a GPU whose memory a job holds. */
class MemoryHeadroomTest {

    static final long MIB = 1024 * 1024;
    static final GpuDevice GPU = new GpuDevice(3, "GPU-busy", "NVIDIA H200", null, Map.of(), 2 * MIB, null,
            NvmlReturn.SUCCESS, null, null);

    @Test
    void belowTheMinimumFreeIsRefusedWithTheNumbersAtOrAboveItIsNot() {
        Random random = new Random();
        for (int round = 0; round < 1000; round++) {
            long total = (1 + random.nextInt(200_000)) * MIB;
            long free = (long) (random.nextDouble() * total);
            long min = random.nextInt(4) == 0 ? free : (long) (random.nextDouble() * 8192) * MIB;
            Finding f = new MemoryHeadroom(min).refusal(GPU, new long[] {total, free, total - free});

            if (min == 0 || free >= min) {
                assertThat(f).as("free %d, min %d", free, min).isNull();
            } else {
                assertThat(f.code()).isEqualTo("GPU_MEMORY_IN_USE");
                assertThat(f.severity()).isEqualTo(Severity.INFO);
                assertThat(f.evidence()).containsEntry("gpu", 3).containsEntry("uuid", "GPU-busy")
                        .containsEntry("freeMiB", free / MIB).containsEntry("usedMiB", (total - free) / MIB)
                        .containsEntry("totalMiB", total / MIB).containsEntry("minFreeMiB", min / MIB);
                assertThat(f.cause()).startsWith("GPU 3 (GPU-busy) has " + free / MIB + " MiB of its " + total / MIB
                        + " MiB free, less than the " + min / MIB + " MiB");
            }
        }
    }

    @Test
    void aSettingIsSpringsSizeFormAndUnsetIsTheDefault() {
        assertThat(MemoryHeadroom.parse(null).minFreeBytes()).isEqualTo(4096 * MIB);
        assertThat(MemoryHeadroom.parse(" ").minFreeBytes()).isEqualTo(4096 * MIB);
        assertThat(MemoryHeadroom.parse("512MB").minFreeBytes()).isEqualTo(512 * MIB);
        assertThat(MemoryHeadroom.parse("0").on()).isFalse();
        assertThatThrownBy(() -> MemoryHeadroom.parse("plenty"))
                .hasMessage("IMEXPROBE_DRIVER_MINFREEMEMORY must be a size such as 4GB, 512MB or 0, got 'plenty'");
    }

    @Test
    void memoryNvmlCouldNotTellOrACheckTurnedOffRefusesNothing() {
        assertThat(new MemoryHeadroom(4096 * MIB).refusal(GPU, null)).isNull();
        assertThat(new MemoryHeadroom(4096 * MIB).refusal(null, new long[] {1, 0, 1})).isNull();
        assertThat(MemoryHeadroom.OFF.refusal(GPU, new long[] {80 * 1024 * MIB, 0, 80 * 1024 * MIB})).isNull();
        assertThat(MemoryHeadroom.OFF.on()).isFalse();
        assertThatThrownBy(() -> new MemoryHeadroom(-1)).hasMessageContaining("must not be negative");
    }
}
