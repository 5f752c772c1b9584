package dev.imexprobe.cuda;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class FabricInfoTest {

    private static FabricInfo info(int state, int status, long mask, int summary) {
        byte[] cluster = new byte[16];
        for (int i = 0; i < 16; i++) {
            cluster[i] = (byte) (i * 17);
        }
        return FabricInfo.decode(new int[] {3, status, 7, state, (int) mask, summary}, cluster);
    }

    @Test
    void measuredH200StateIsNotSupportedAndNotJudged() {
        FabricInfo f = info(0, 3, 0, 0);
        assertThat(f.stateName()).isEqualTo("NOT_SUPPORTED");
        assertThat(f.statusName()).isEqualTo("NVML_ERROR_NOT_SUPPORTED");
        assertThat(f.healthy()).isNull();
        assertThat(f.clusterUuid()).isEqualTo("00112233-4455-6677-8899-aabbccddeeff");
    }

    @Test
    void healthMaskFieldsDecodeAsInNvmlH() {
        // degraded bw TRUE(1) | route recovery FALSE(2)<<2 | route unhealthy TRUE(1)<<4 | timeout FALSE(2)<<6 | config NO_PARTITION(4)<<8
        long mask = 1 | (2 << 2) | (1 << 4) | (2 << 6) | (4 << 8);
        FabricInfo.Health h = info(3, 0, mask, 2).health();
        assertThat(h.degradedBandwidth()).isEqualTo("TRUE");
        assertThat(h.routeRecovery()).isEqualTo("FALSE");
        assertThat(h.routeUnhealthy()).isEqualTo("TRUE");
        assertThat(h.accessTimeoutRecovery()).isEqualTo("FALSE");
        assertThat(h.incorrectConfiguration()).isEqualTo("NO_PARTITION");
        assertThat(h.unknownBits()).isZero();
        assertThat(info(3, 0, mask, 2).healthy()).isFalse();
    }

    @Test
    void completedAndCleanIsHealthyAndDegradedIsOnlyDegraded() {
        long clean = 2 | (2 << 2) | (2 << 4) | (2 << 6) | (1 << 8);
        assertThat(info(3, 0, clean, 1).healthy()).isTrue();
        assertThat(info(3, 0, clean, 1).degraded()).isFalse();
        FabricInfo degraded = info(3, 0, (clean & ~3L) | 1, 3);
        assertThat(degraded.healthy()).isTrue();
        assertThat(degraded.degraded()).isTrue();
        assertThat(info(3, 999, clean, 1).healthy()).as("registration status error").isFalse();
        assertThat(info(2, 0, clean, 1).healthy()).as("in progress: not judged").isNull();
    }

    @RepeatedTest(20)
    void randomMasksNeverThrowAndKeepUnknownBits() {
        Random r = new Random();
        long mask = Integer.toUnsignedLong(r.nextInt());
        FabricInfo f = info(r.nextInt(6), r.nextInt(30), mask, r.nextInt(6));
        assertThat(f.health().unknownBits()).isEqualTo(mask & ~0xFFFL);
        assertThat(f.stateName()).isNotBlank();
        assertThat(f.healthSummaryName()).isNotBlank();
    }
}
