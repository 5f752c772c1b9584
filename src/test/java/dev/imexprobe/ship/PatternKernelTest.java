package dev.imexprobe.ship;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fill kernel's PTX (native/src/pattern_kernel.h, written by pattern_kernel.sh from pattern_kernel.cu, which needs
 * nvcc and so does not run in the build) must compute pattern.h's words: the host compares what the GPU wrote with
 * pattern.h, so a constant changed on one side only fails every probe on a GPU, and nowhere on the fake (which runs
 * pattern.h itself). This ties the committed PTX to pattern.h: the same three 64-bit constants, the same shifts, in the
 * same order, and the .cu the header says it came from holding them too.
 */
class PatternKernelTest {

    private static String read(String file) throws IOException {
        return Files.readString(Project.NATIVE.resolve("src").resolve(file));
    }

    /** The 0x… constants of pattern_word, in the order they appear. */
    private static List<Long> hexConstants(String c) {
        List<Long> out = new ArrayList<>();
        Matcher m = Pattern.compile("0x([0-9A-Fa-f]{16})ULL").matcher(c);
        while (m.find()) {
            out.add(Long.parseUnsignedLong(m.group(1), 16));
        }
        return out;
    }

    private static List<Integer> shifts(String text, String op) {
        List<Integer> out = new ArrayList<>();
        Matcher m = Pattern.compile(op).matcher(text);
        while (m.find()) {
            out.add(Integer.parseInt(m.group(1)));
        }
        return out;
    }

    private static String wordFunction(String c) {
        int start = c.indexOf("pattern_word(");
        return c.substring(start, c.indexOf('}', start));
    }

    @Test
    void thePtxComputesPatternHsWords() throws IOException {
        String word = wordFunction(read("pattern.h"));
        List<Long> constants = hexConstants(word);
        assertThat(constants).as("pattern_word's golden ratio and two multipliers").hasSize(3);
        List<Integer> hostShifts = shifts(word, ">> (\\d+)");
        assertThat(hostShifts).containsExactly(30, 27, 31);

        String ptx = read("pattern_kernel.h");
        List<Long> ptxConstants = new ArrayList<>();
        Matcher m = Pattern.compile("(?:mul\\.lo\\.s64|add\\.s64)\\s+%rd\\d+, %rd\\d+, (-?\\d{6,})").matcher(ptx);
        while (m.find()) {
            ptxConstants.add(Long.parseLong(m.group(1)));
        }
        // the golden ratio appears twice (folded into seed + golden and multiplied by the index), then the multipliers
        assertThat(ptxConstants).as("the PTX's 64-bit immediates")
                .containsExactly(constants.get(0), constants.get(0), constants.get(1), constants.get(2));
        assertThat(shifts(ptx, "shr\\.u64\\s+%rd\\d+, %rd\\d+, (\\d+);")).isEqualTo(hostShifts);
        assertThat(ptx).contains(".entry imexprobe_pattern_fill(").contains(".version 7.0").contains("st.global.u64");

        String cu = read("pattern_kernel.cu");
        assertThat(hexConstants(cu)).isEqualTo(constants);
        assertThat(shifts(cu, ">> (\\d+)")).isEqualTo(hostShifts);
    }
}
