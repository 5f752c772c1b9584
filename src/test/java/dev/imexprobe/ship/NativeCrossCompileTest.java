package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves the JNI shim builds for Grace (arm64) hosts: cross-compiles native/ with Debian's aarch64-linux-gnu-gcc
 * through the project's own Makefile and reads the ELF header of the result. No arm64 machine or image is needed.
 */
class NativeCrossCompileTest {

    static final int EM_X86_64 = 62;
    static final int EM_AARCH64 = 183;

    @Test
    void shimCrossCompilesForAarch64(@TempDir Path out) throws Exception {
        assumeTrue(Files.isRegularFile(Project.NATIVE.resolve("src/jni_bridge.c")),
                "native/src/jni_bridge.c is not in this tree yet: arm64 cross-compile skipped");
        var cc = Tools.onPath("aarch64-linux-gnu-gcc");
        assumeTrue(cc.isPresent() && Files.isDirectory(Path.of("/usr/aarch64-linux-gnu/include")),
                "aarch64 cross compiler or its libc headers not installed"
                        + " (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross): skipped");
        Path so = out.resolve("libimexprobe.so");
        String javaHome = System.getProperty("java.home");
        assertThat(Path.of(javaHome, "include", "jni.h")).as("a JDK with jni.h runs the tests").exists();

        Tools.Result r = Tools.run(Project.ROOT, 300, List.of("make", "-C", Project.NATIVE.toString(), "ARCH=aarch64",
                "CC=aarch64-linux-gnu-gcc", "OUT=" + out, so.toString(), "JAVA_HOME=" + javaHome));
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(so).isRegularFile();

        Elf elf = Elf.read(so);
        assertThat(elf.is64Bit()).isTrue();
        assertThat(elf.littleEndian()).isTrue();
        assertThat(elf.type()).as("ET_DYN, a shared object").isEqualTo(3);
        assertThat(elf.machine()).as("e_machine").isEqualTo(EM_AARCH64);
    }

    @Test
    void elfReaderTellsArchitecturesApart() throws Exception {
        // This JVM's own libjava.so is x86-64 on CI: the reader must not answer AArch64 for everything.
        Path libjava = Path.of(System.getProperty("java.home"), "lib", "libjava.so");
        assumeTrue(Files.isRegularFile(libjava), "no libjava.so to compare with");
        int expected = switch (System.getProperty("os.arch")) {
            case "amd64", "x86_64" -> EM_X86_64;
            case "aarch64" -> EM_AARCH64;
            default -> -1;
        };
        assumeTrue(expected > 0, "unknown host architecture");
        assertThat(Elf.read(libjava).machine()).isEqualTo(expected);
    }

    /** The few ELF header fields we check (e_ident class/data, e_type, e_machine). */
    record Elf(boolean is64Bit, boolean littleEndian, int type, int machine) {

        static Elf read(Path file) throws Exception {
            byte[] header = new byte[20];
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
                f.readFully(header);
            }
            assertThat(new byte[] {header[0], header[1], header[2], header[3]})
                    .as("ELF magic of %s", file).containsExactly(0x7f, 'E', 'L', 'F');
            boolean little = header[5] == 1;
            ByteBuffer b = ByteBuffer.wrap(header).order(little ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
            return new Elf(header[4] == 2, little, Short.toUnsignedInt(b.getShort(16)), Short.toUnsignedInt(b.getShort(18)));
        }
    }
}
