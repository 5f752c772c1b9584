package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class DeviceFileTest {

    @Test
    void decodesGlibcDeviceNumbersIncludingTheHighBits() {
        // Hand-computed with glibc's layout: makedev(195, 0) = 0xc300; makedev(1, 3) = 0x103;
        // makedev(511, 2047) = 0x1ff << 8 | 0xff | 0x700 << 12 = 0x71ffff.
        assertThat(DeviceFile.major(0xc300L)).isEqualTo(195);
        assertThat(DeviceFile.minor(0xc300L)).isZero();
        assertThat(DeviceFile.major(0x103L)).isEqualTo(1);
        assertThat(DeviceFile.minor(0x103L)).isEqualTo(3);
        assertThat(DeviceFile.major(0x71ffffL)).isEqualTo(511);
        assertThat(DeviceFile.minor(0x71ffffL)).isEqualTo(2047);
        // A major above 12 bits lives from bit 44 up.
        long big = DeviceFile.makedev(0x12345, 0x6789a);
        assertThat(DeviceFile.major(big)).isEqualTo(0x12345);
        assertThat(DeviceFile.minor(big)).isEqualTo(0x6789a);
    }

    @Test
    void majorAndMinorRoundTripForRandomNumbers() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int i = 0; i < 10_000; i++) {
            int major = random.nextInt(1 << 20);
            int minor = random.nextInt(1 << 20);
            long rdev = DeviceFile.makedev(major, minor);
            assertThat(DeviceFile.major(rdev)).as("seed %d major %d minor %d", seed, major, minor).isEqualTo(major);
            assertThat(DeviceFile.minor(rdev)).as("seed %d major %d minor %d", seed, major, minor).isEqualTo(minor);
        }
    }

    @Test
    void statsTheRealNullDevice() {
        DeviceFile devNull = DeviceFile.stat(Path.of("/dev/null"));
        assertThat(devNull.type()).isEqualTo(DeviceFile.Type.CHAR_DEVICE);
        assertThat(devNull.major()).isEqualTo(1);
        assertThat(devNull.minor()).isEqualTo(3);
        assertThat(devNull.openForReadError()).isNull();
    }

    @Test
    void missingAndDanglingSymlinkAreMissingWithTheReason(@TempDir Path dir) throws Exception {
        assertThat(DeviceFile.stat(dir.resolve("nothing")).type()).isEqualTo(DeviceFile.Type.MISSING);
        Path link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("gone"));
        DeviceFile dangling = DeviceFile.stat(link);
        assertThat(dangling.exists()).isFalse();
        assertThat(dangling.openForReadError()).startsWith("dangling symlink to ").endsWith("gone");
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.SECONDS)
    void neverOpensAFifoBecauseThatWouldBlock(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("channel0");
        Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(p.waitFor()).isZero();
        DeviceFile file = DeviceFile.stat(fifo);
        assertThat(file.type()).isEqualTo(DeviceFile.Type.FIFO);
        assertThat(file.openForReadError()).isEqualTo("is a fifo, not opened");
    }
}
