package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;

import org.junit.jupiter.api.Test;

class ProcDevicesTest {

    @Test
    void readsTheImexMajorFromTheCharacterSectionOnly() {
        long seed = System.nanoTime();
        int major = 200 + new Random(seed).nextInt(300);
        ProcDevices devices = ProcDevices.parse(Fixtures.procDevices(major));
        assertThat(devices.characterMajor(ProcDevices.IMEX_CHANNELS)).as("seed %d", seed).isEqualTo(major);
        assertThat(devices.characterMajor("nvidia-frontend")).isEqualTo(195);
        assertThat(devices.characterMajor("loop")).as("a block device").isNull();
    }

    @Test
    void noImexLineMeansNoMajor() {
        assertThat(ProcDevices.parse(Fixtures.procDevices(null)).characterMajor(ProcDevices.IMEX_CHANNELS)).isNull();
    }

    @Test
    void toleratesGarbage() {
        ProcDevices devices = ProcDevices.parse("Character devices:\nxx nvidia-caps-imex-channels\n\u0000\u0001\n"
                + " 42 answer\n");
        assertThat(devices.characterMajor(ProcDevices.IMEX_CHANNELS)).isNull();
        assertThat(devices.characterMajor("answer")).isEqualTo(42);
        assertThat(ProcDevices.parse("").characterMajors()).isEmpty();
    }
}
