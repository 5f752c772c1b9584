package dev.imexprobe.cuda;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The CUresult table is exactly the enum of the installed cuda.h: every code, every name, nothing extra. */
class CuResultTableTest {

    /** The CUDA release the table was written from (CUDA_VERSION of its cuda.h). */
    static final int TABLE_FROM = 13000;

    static Path cudaHeader() {
        String home = System.getenv("CUDA_HOME");
        Path p = Path.of(home != null ? home : "/usr/local/cuda", "include", "cuda.h");
        return Files.isRegularFile(p) ? p : null;
    }

    static Map<Integer, String> parse(String header) {
        Matcher block = Pattern.compile("typedef enum cudaError_enum \\{(.*?)} CUresult;", Pattern.DOTALL).matcher(header);
        assertThat(block.find()).as("cuda.h has the CUresult enum").isTrue();
        Matcher entry = Pattern.compile("^\\s+(CUDA_[A-Z0-9_]+)\\s*=\\s*(\\d+)", Pattern.MULTILINE).matcher(block.group(1));
        Map<Integer, String> codes = new TreeMap<>();
        while (entry.find()) {
            codes.put(Integer.parseInt(entry.group(2)), entry.group(1));
        }
        return codes;
    }

    @Test
    void tableMatchesTheInstalledCudaHeader() throws IOException {
        Path header = cudaHeader();
        assumeTrue(header != null, "no cuda.h installed (set CUDA_HOME): the table is checked where the toolkit is");
        String text = Files.readString(header);
        Map<Integer, String> fromHeader = parse(text);
        assertThat(fromHeader).hasSizeGreaterThan(90);
        Matcher version = Pattern.compile("#define CUDA_VERSION (\\d+)").matcher(text);
        assertThat(version.find()).as("cuda.h defines CUDA_VERSION").isTrue();
        if (Integer.parseInt(version.group(1)) >= TABLE_FROM) {
            assertThat(new TreeMap<>(CuResult.table())).isEqualTo(fromHeader);
        } else {
            // An older toolkit (CI's Debian headers): every code it knows has the same name here; ours has more.
            assertThat(CuResult.table()).containsAllEntriesOf(fromHeader);
        }
    }

    @Test
    void unknownCodesKeepTheirNumber() {
        CuResult r = CuResult.of(123456);
        assertThat(r.code()).isEqualTo(123456);
        assertThat(r.name()).isEqualTo("CUDA_ERROR_UNRECOGNIZED_123456");
        assertThat(CuResult.of(101).name()).isEqualTo("CUDA_ERROR_INVALID_DEVICE");
        assertThat(CuResult.of(800)).isEqualTo(CuResult.NOT_PERMITTED);
        assertThat(CuResult.SUCCESS.ok()).isTrue();
        assertThat(CuResult.NOT_SUPPORTED.ok()).isFalse();
    }
}
