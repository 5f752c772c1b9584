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
 * The pattern kernels' PTX (native/src/pattern_kernel.h, written by pattern_kernel.sh from pattern_kernel.cu, which
 * needs nvcc and so does not run in the build) must compute pattern.h's words: the fill's words are checked by the
 * other agent (perhaps on the host), the compare's against words another agent's fill wrote, so a constant changed
 * on one side only fails every probe on a GPU, and nowhere on the fake (which runs pattern.h itself). This ties each
 * kernel of the committed PTX to pattern.h: the same three 64-bit constants, the same shifts, in the same order, and
 * the .cu the header says it came from holding them too.
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
        assertThat(ptx).contains(".version 7.0");
        String[] entries = ptx.split("\\.entry ");
        assertThat(entries).as("the fill and the compare kernel").hasSize(3);
        for (int k = 1; k < entries.length; k++) {
            String kernel = entries[k];
            List<Long> ptxConstants = new ArrayList<>();
            Matcher m = Pattern.compile("(?:mul\\.lo\\.s64|add\\.s64)\\s+%rd\\d+, %rd\\d+, (-?\\d{6,})").matcher(kernel);
            while (m.find()) {
                ptxConstants.add(Long.parseLong(m.group(1)));
            }
            // the golden ratio appears twice (folded into seed + golden and multiplied by the index), then the
            // multipliers
            assertThat(ptxConstants).as("the 64-bit immediates of %s", kernel.substring(0, kernel.indexOf('(')))
                    .containsExactly(constants.get(0), constants.get(0), constants.get(1), constants.get(2));
            assertThat(shifts(kernel, "shr\\.u64\\s+%rd\\d+, %rd\\d+, (\\d+);")).isEqualTo(hostShifts);
        }
        assertThat(entries[1]).startsWith("imexprobe_pattern_fill(").contains("st.global.u64");
        assertThat(entries[2]).startsWith("imexprobe_pattern_compare(").contains("ld.global.u64");

        String cu = read("pattern_kernel.cu");
        List<Long> twice = new ArrayList<>(constants);
        twice.addAll(constants);
        assertThat(hexConstants(cu)).as("pattern_word's constants in each kernel").isEqualTo(twice);
        List<Integer> shiftsTwice = new ArrayList<>(hostShifts);
        shiftsTwice.addAll(hostShifts);
        assertThat(shifts(cu, ">> (\\d+)")).isEqualTo(shiftsTwice);
    }
}
