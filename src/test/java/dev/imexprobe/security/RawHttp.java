package dev.imexprobe.security;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, one connection per request (or one kept alive for many, {@link #sendKeptAlive}):
 * what a hostile client can send and java.net.http refuses to (any method, a request target with invalid
 * percent-encoding, {@code ..}, {@code //} or NUL, a body of invalid UTF-8, several headers of one name). The answer
 * is read whole: status, headers, body (fixed length, chunked, or until close).
 */
public final class RawHttp {

    private static final int READ_TIMEOUT_MS = 60_000;

    private RawHttp() {
    }

    /** One request as it goes on the wire; headers may repeat a name. */
    public record Request(String method, String target, List<Map.Entry<String, String>> headers, byte[] body) {

        public static Request of(String method, String target) {
            return new Request(method, target, new ArrayList<>(), null);
        }

        Request header(String name, String value) {
            headers.add(Map.entry(name, value));
            return this;
        }

        Request json(byte[] body) {
            header("Content-Type", "application/json");
            return new Request(method, target, headers, body);
        }

        Request body(byte[] body) {
            return new Request(method, target, headers, body);
        }

        /** Short form for failure messages: method, target (cut) and the start of the body. */
        String describe() {
            String t = target.length() > 200 ? target.substring(0, 200) + "…(" + target.length() + ")" : target;
            String b = body == null ? "" : " body " + Replies.preview(new String(body, StandardCharsets.ISO_8859_1));
            StringBuilder h = new StringBuilder();
            for (Map.Entry<String, String> e : headers) {
                String v = e.getValue().length() > 80 ? e.getValue().substring(0, 80) + "…" : e.getValue();
                h.append(" [").append(e.getKey()).append(": ").append(v).append(']');
            }
            return method + " " + t + h + b;
        }
    }

    /** An answer: status, headers by lower-case name, the body's bytes. */
    public record Reply(int status, Map<String, List<String>> headers, byte[] body) {

        public String header(String name) {
            List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
            return v == null || v.isEmpty() ? null : v.getFirst();
        }

        String contentType() {
            String v = header("content-type");
            return v == null ? "" : v;
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    static Reply send(int port, Request r) {
        try (Socket s = connect(port)) {
            OutputStream out = s.getOutputStream();
            try {
                out.write(wire(port, r, true));
                out.flush();
            } catch (IOException e) {
                // The server may answer and close before it read all of a body it refused: read what it said.
            }
            return read(s.getInputStream(), r.method().equals("HEAD"));
        } catch (IOException e) {
            throw new UncheckedIOException("no answer to " + r.describe() + ": " + e, e);
        }
    }

    /**
     * The same request count times on one kept-alive connection, each sent once the last answer was read: the
     * answers in order, as many as came before the server closed the connection.
     */
    public static List<Reply> sendKeptAlive(int port, Request r, int count) {
        List<Reply> replies = new ArrayList<>();
        try (Socket s = connect(port)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            byte[] request = wire(port, r, false);
            for (int i = 0; i < count; i++) {
                s.getOutputStream().write(request);
                replies.add(read(in, r.method().equals("HEAD")));
            }
        } catch (IOException e) {
            // the server closed the connection (or stopped answering): the answers so far say how far it went
        }
        return replies;
    }

    private static Socket connect(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        s.setSoTimeout(READ_TIMEOUT_MS);
        return s;
    }

    private static byte[] wire(int port, Request r, boolean close) {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        head.writeBytes((r.method() + " " + r.target() + " HTTP/1.1\r\n").getBytes(StandardCharsets.ISO_8859_1));
        head.writeBytes(("Host: 127.0.0.1:" + port + "\r\n" + (close ? "Connection: close\r\n" : ""))
                .getBytes(StandardCharsets.ISO_8859_1));
        for (Map.Entry<String, String> h : r.headers()) {
            head.writeBytes((h.getKey() + ": " + h.getValue() + "\r\n").getBytes(StandardCharsets.UTF_8));
        }
        if (r.body() != null) {
            head.writeBytes(("Content-Length: " + r.body().length + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        }
        head.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        if (r.body() != null) {
            head.writeBytes(r.body());
        }
        return head.toByteArray();
    }

    private static Reply read(InputStream in, boolean head) throws IOException {
        String statusLine = line(in);
        if (statusLine == null) {
            throw new IOException("connection closed before a status line");
        }
        String[] parts = statusLine.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP status line: " + statusLine);
        }
        int status = Integer.parseInt(parts[1]);
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String l = line(in); l != null && !l.isEmpty(); l = line(in)) {
            int colon = l.indexOf(':');
            if (colon > 0) {
                headers.computeIfAbsent(l.substring(0, colon).strip().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                        .add(l.substring(colon + 1).strip());
            }
        }
        if (status == 100) {
            return read(in, head); // 100 Continue, then the real answer
        }
        if (head || status == 204 || status == 304) {
            return new Reply(status, headers, new byte[0]);
        }
        List<String> te = headers.get("transfer-encoding");
        if (te != null && te.getFirst().equalsIgnoreCase("chunked")) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            while (true) {
                String size = line(in);
                if (size == null) {
                    break;
                }
                int n = Integer.parseInt(size.split(";")[0].strip(), 16);
                if (n == 0) {
                    while (true) { // trailers
                        String t = line(in);
                        if (t == null || t.isEmpty()) {
                            break;
                        }
                    }
                    break;
                }
                body.writeBytes(in.readNBytes(n));
                line(in);
            }
            return new Reply(status, headers, body.toByteArray());
        }
        List<String> length = headers.get("content-length");
        if (length != null) {
            return new Reply(status, headers, in.readNBytes(Integer.parseInt(length.getFirst())));
        }
        return new Reply(status, headers, in.readAllBytes());
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                byte[] bytes = b.toByteArray();
                int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }
}
