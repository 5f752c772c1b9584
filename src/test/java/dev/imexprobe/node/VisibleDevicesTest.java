package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class VisibleDevicesTest {

    @Test
    void unsetMeansEveryGpuAndIsSaidSo() {
        VisibleDevices visible = VisibleDevices.from(Map.of("PATH", "/usr/bin"));
        assertThat(visible.raw()).isNull();
        assertThat(visible.set()).isFalse();
        assertThat(visible.entries()).isEmpty();
        assertThat(visible.invalidEntry()).isNull();
    }

    @Test
    void emptyValueHidesEveryGpu() {
        VisibleDevices visible = VisibleDevices.from(Map.of("CUDA_VISIBLE_DEVICES", ""));
        assertThat(visible.set()).isTrue();
        assertThat(visible.entries()).isEmpty();
        assertThat(visible.invalidEntry()).isEmpty();
    }

    @Test
    void parsesIndicesAndUuids() {
        VisibleDevices visible = VisibleDevices.parse(
                "1, GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,GPU-8932f9,MIG-GPU-8932f937/1/0,MIG-4a2c1f00-1b2c,0");
        assertThat(visible.entries()).extracting(VisibleDevices.Entry::kind).containsExactly(
                VisibleDevices.Kind.INDEX, VisibleDevices.Kind.GPU_UUID, VisibleDevices.Kind.GPU_UUID,
                VisibleDevices.Kind.MIG_UUID, VisibleDevices.Kind.MIG_UUID, VisibleDevices.Kind.INDEX);
        assertThat(visible.entries()).extracting(VisibleDevices.Entry::index)
                .containsExactly(1, null, null, null, null, 0);
        assertThat(visible.entries().get(1).value()).isEqualTo("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
        assertThat(visible.invalidEntry()).isNull();
        assertThat(visible.ignored()).isEmpty();
    }

    @Test
    void stopsAtTheFirstInvalidEntryLikeTheDriver() {
        VisibleDevices visible = VisibleDevices.parse("0,-1,1");
        assertThat(visible.entries()).extracting(VisibleDevices.Entry::index).containsExactly(0);
        assertThat(visible.invalidEntry()).isEqualTo("-1");
        assertThat(visible.ignored()).containsExactly("-1", "1");

        assertThat(VisibleDevices.parse("2,1,").ignored()).containsExactly("");
        assertThat(VisibleDevices.parse("GPU-xyz,0").entries()).isEmpty();
        assertThat(VisibleDevices.parse("99999999999").invalidEntry()).isEqualTo("99999999999");
    }

    @Test
    void randomListsAreCutExactlyAtTheInvalidEntry() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String[] invalid = {"foo", "-1", "0x1", "GPU", "1.5", "gpu-1234", "NoDevFiles"};
        for (int round = 0; round < 500; round++) {
            int n = 1 + random.nextInt(8);
            int cut = random.nextInt(n + 1); // n = no invalid entry
            List<String> parts = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                parts.add(i == cut ? invalid[random.nextInt(invalid.length)] : Integer.toString(random.nextInt(16)));
            }
            String raw = String.join(",", parts);
            VisibleDevices visible = VisibleDevices.parse(raw);
            int honoured = Math.min(cut, n);
            assertThat(visible.entries()).as("seed %d raw %s", seed, raw).hasSize(honoured);
            assertThat(visible.entries()).extracting(VisibleDevices.Entry::value)
                    .as("seed %d raw %s", seed, raw).containsExactlyElementsOf(parts.subList(0, honoured));
            assertThat(visible.invalidEntry()).as("seed %d raw %s", seed, raw)
                    .isEqualTo(cut < n ? parts.get(cut) : null);
            assertThat(visible.ignored()).as("seed %d raw %s", seed, raw)
                    .containsExactlyElementsOf(parts.subList(honoured, n));
        }
    }
}
