package dev.imexprobe.security;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The bytes an export holds, computed the way native/src/jni_bridge.c writes them (word i, little-endian 64-bit,
 * = splitmix64 of seed + (i + 1) * 0x9E3779B97F4A7C15), and every spelling of them an answer could carry if it
 * leaked memory contents: base64 of a run of words at each of the three byte alignments base64 can have,
 * hexadecimal (both cases, both byte orders), and decimal (signed and unsigned).
 */
final class PatternWords {

    private final long seed;
    private final List<String> needles;

    PatternWords(long seed, long sizeBytes, long[] extraIndices) {
        this.seed = seed;
        Set<String> n = new LinkedHashSet<>();
        List<Long> indices = new ArrayList<>();
        for (long i = 0; i < 4; i++) {
            indices.add(i);
        }
        for (long i : extraIndices) {
            indices.add(Math.floorMod(i, sizeBytes / 8 - 3));
        }
        for (long i : indices) {
            byte[] run = bytes(i, 3);
            for (int shift = 0; shift < 3; shift++) {
                // 24 - shift bytes starting at byte `shift` of the run: base64 of memory starting at any byte lands
                // on one of these three alignments. 16 bytes of it make 20+ characters: no accidental match.
                byte[] part = java.util.Arrays.copyOfRange(run, shift, shift + 18);
                n.add(Base64.getEncoder().encodeToString(part).substring(0, 24));
                n.add(Base64.getUrlEncoder().encodeToString(part).substring(0, 24));
            }
            long w = word(seed, i);
            byte[] le = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(w).array();
            byte[] be = ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN).putLong(w).array();
            for (byte[] b : List.of(le, be)) {
                String hex = HexFormat.of().formatHex(b);
                n.add(hex);
                n.add(hex.toUpperCase(Locale.ROOT));
            }
            n.add(Long.toString(w));
            n.add(Long.toUnsignedString(w));
        }
        this.needles = List.copyOf(n);
    }

    static long word(long seed, long index) {
        long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** {@code count} words from {@code first}, little-endian, as the memory holds them. */
    byte[] bytes(long first, int count) {
        ByteBuffer b = ByteBuffer.allocate(8 * count).order(ByteOrder.LITTLE_ENDIAN);
        for (int k = 0; k < count; k++) {
            b.putLong(word(seed, first + k));
        }
        return b.array();
    }

    List<String> needles() {
        return needles;
    }

    /** The first spelling of the memory found in {@code text}, or null. */
    String foundIn(String text) {
        for (String needle : needles) {
            if (text.contains(needle)) {
                return needle;
            }
        }
        return null;
    }
}
