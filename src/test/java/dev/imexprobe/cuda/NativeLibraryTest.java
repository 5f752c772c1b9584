package dev.imexprobe.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLibraryTest {

    @TempDir
    Path dir;

    @Test
    void aFileOfTheSameSizeButOtherBytesIsReplaced() throws Exception {
        Path target = dir.resolve("libimexprobe.so");
        byte[] wanted = "the shim of this jar".getBytes(StandardCharsets.US_ASCII);
        byte[] torn = "the shim of THAT jar".getBytes(StandardCharsets.US_ASCII);
        assertThat(torn).hasSameSizeAs(wanted);
        Files.write(target, torn);

        assertThat(NativeLibrary.place(target, wanted)).isTrue();
        assertThat(Files.readAllBytes(target)).isEqualTo(wanted);
        try (var left = Files.list(dir)) {
            assertThat(left).containsExactly(target);
        }
    }

    @Test
    void aFileWithTheSameHashIsKept() throws Exception {
        Path target = dir.resolve("libimexprobe.so");
        byte[] wanted = "the shim of this jar".getBytes(StandardCharsets.US_ASCII);
        Files.write(target, wanted);
        FileTime old = FileTime.from(Instant.parse("2020-01-01T00:00:00Z"));
        Files.setLastModifiedTime(target, old);

        assertThat(NativeLibrary.place(target, wanted)).isFalse();
        assertThat(Files.getLastModifiedTime(target)).isEqualTo(old);
    }

    @Test
    void aMissingFileIsWritten() throws Exception {
        Path target = dir.resolve("libcuda.so.1");
        byte[] wanted = {1, 2, 3};

        assertThat(NativeLibrary.place(target, wanted)).isTrue();
        assertThat(Files.readAllBytes(target)).isEqualTo(wanted);
    }
}
