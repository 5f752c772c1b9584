package dev.imexprobe.security;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

/**
 * Random JSON and almost-JSON as bytes, from a seeded {@link Random}: nested values of every type, numbers far
 * beyond 64 bits, escapes, duplicate keys, deep nesting, NUL and invalid UTF-8 bytes, strings of any length.
 */
final class RandomJson {

    private static final List<String> WEIRD_STRINGS = List.of("", " ", "\\u0000", "\\ud800", "\\udfff\\ud800",
            "FABRIC", "fabric", "POSIX_FD", "FABRIC\\u0000", "GPU-", "GPU-00000000-0000-0000-0000-000000000000",
            "../../etc/passwd", "${jndi:ldap://x/a}", "#{7*7}", "<script>alert(1)</script>", "' OR 1=1 --",
            "%n%n%n%s", "\\n\\r\\t", "NaN", "Infinity", "-0", "0x10", "1e309", "９", "٣", "\\u202e");
    private static final List<String> NUMBERS = List.of("0", "-0", "1", "-1", "2097152", "-2097152", "4194304",
            "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
            "123456789012345678901234567890123456789", "1e400", "-1e400", "1.5", "2097152.0", "2.097152e6",
            "0.0000001", "1E2", "4294967296", "1073741822", "1073741826", "2147483648", "NaN", "Infinity",
            "00", "01", "+1", ".5", "1.", "0x20");
    // Not 1073741824 (exactly the cap): as sizeBytes it is a real 1 GiB create, which on the fake driver (a
    // file-backed allocation filled with the pattern) outlasts the 5 s driver deadline here, so the agent rightly
    // answers 200 with create "timeout" where a rule expects 201/400/413. 1073741822 stays next to the cap (400).

    private final Random r;

    RandomJson(Random r) {
        this.r = r;
    }

    /** A random JSON value (or near-JSON: one time in ten something a lenient parser might take). */
    String value(int depth) {
        int k = r.nextInt(depth <= 0 ? 5 : 9);
        return switch (k) {
            case 0 -> NUMBERS.get(r.nextInt(NUMBERS.size()));
            case 1 -> Long.toString(r.nextLong());
            case 2 -> quoted(string());
            case 3 -> r.nextBoolean() ? "true" : "false";
            case 4 -> "null";
            case 5, 6 -> object(depth - 1, List.of());
            case 7 -> array(depth - 1);
            default -> quoted(WEIRD_STRINGS.get(r.nextInt(WEIRD_STRINGS.size())));
        };
    }

    /** An object whose keys are mostly the given field names (so validation goes deep), some unknown, some twice. */
    String object(int depth, List<String> fields) {
        StringBuilder b = new StringBuilder("{");
        int n = r.nextInt(6);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                b.append(',');
            }
            String key = !fields.isEmpty() && r.nextInt(4) != 0 ? fields.get(r.nextInt(fields.size())) : string();
            b.append(quoted(key)).append(':').append(value(depth));
        }
        return b.append('}').toString();
    }

    String array(int depth) {
        StringBuilder b = new StringBuilder("[");
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(value(depth));
        }
        return b.append(']').toString();
    }

    /** A short random string: ASCII, escapes, any Unicode (surrogates escaped). */
    String string() {
        int len = r.nextInt(12);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < len; i++) {
            switch (r.nextInt(6)) {
                case 0 -> b.append((char) ('a' + r.nextInt(26)));
                case 1 -> b.append("\\u").append(String.format("%04x", r.nextInt(0x10000)));
                case 2 -> b.append("\\\"");
                case 3 -> b.appendCodePoint(0xA0 + r.nextInt(0x2000));
                case 4 -> b.append((char) ('0' + r.nextInt(10)));
                default -> b.append("-_./:".charAt(r.nextInt(5)));
            }
        }
        return b.toString();
    }

    static String quoted(String escapedContent) {
        return "\"" + escapedContent + "\"";
    }

    /** Bytes that are not well-formed JSON text in one of several ways. */
    byte[] broken() {
        return switch (r.nextInt(12)) {
            case 0 -> "[".repeat(2000 + r.nextInt(3000)).getBytes(StandardCharsets.US_ASCII); // deep nesting
            case 1 -> ("{\"a\":".repeat(1200) + "1" + "}".repeat(1200)).getBytes(StandardCharsets.US_ASCII);
            case 2 -> withBytes("{\"handle\":\"", new byte[] {(byte) 0xC3, 0x28, (byte) 0xFF, (byte) 0xFE}, "\"}");
            case 3 -> withBytes("{\"handleType\":\"FAB", new byte[] {0, 0, 0}, "RIC\"}");
            case 4 -> withBytes("", new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, "[{}]"); // BOM, then no object
            case 5 -> withBytes("{\"seed\":1", new byte[] {0}, "}");
            case 6 -> "{\"sizeBytes\":2097152,\"sizeBytes\":-1,\"sizeBytes\":\"x\"}".getBytes(StandardCharsets.UTF_8);
            case 7 -> "{\"a\":1}{\"b\":2}".getBytes(StandardCharsets.UTF_8); // trailing content
            case 8 -> "{'handle':'AAAA'}".getBytes(StandardCharsets.UTF_8);
            case 9 -> "{\"handle\":\"AAAA\",}".getBytes(StandardCharsets.UTF_8);
            case 10 -> withBytes("{\"gpu\":\"", new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, "\"}"); // CESU surrogate
            default -> randomBytes(1 + r.nextInt(200));
        };
    }

    /** A body around {@code size} bytes: one object with a long string, just under, at or over the 16 KiB limit. */
    byte[] sized(int size, String field) {
        String head = "{\"" + field + "\":\"";
        String tail = "\"}";
        int fill = Math.max(0, size - head.length() - tail.length());
        return (head + "A".repeat(fill) + tail).getBytes(StandardCharsets.US_ASCII);
    }

    byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private static byte[] withBytes(String before, byte[] middle, String after) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        o.writeBytes(middle);
        o.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return o.toByteArray();
    }
}
