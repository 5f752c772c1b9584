package dev.imexprobe.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Reading an agent's answer off a raw socket, for tests that send what no HTTP client would. */
public final class RawAnswers {

    private RawAnswers() {
    }

    /**
     * Reads into {@code got} until the head and the end of a JSON body ({@code }}) have come, or the stream ends;
     * on a read error {@code got} keeps what arrived before it.
     */
    public static String readJsonAnswer(InputStream in, ByteArrayOutputStream got) throws IOException {
        byte[] buf = new byte[4096];
        int n;
        while ((n = in.read(buf)) > 0) {
            got.write(buf, 0, n);
            String text = got.toString(StandardCharsets.UTF_8);
            if (text.indexOf("\r\n\r\n") > 0 && text.contains("}")) {
                return text;
            }
        }
        return got.toString(StandardCharsets.UTF_8);
    }
}
