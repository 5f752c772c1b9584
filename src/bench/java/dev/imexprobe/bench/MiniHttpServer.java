package dev.imexprobe.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The smallest HTTP/1.1 server that a JDK HttpClient keeps a connection open to: Content-Length bodies only,
 * keep-alive, one virtual thread per connection. The bench uses it where the JDK's own HttpServer is not in the
 * runtime (the jlinked runtime of the GPU bundle has no jdk.httpserver) and for the simulated peers of the scale
 * run, 71 of which cost almost nothing while idle. Not a general server: loopback only, no chunked bodies.
 */
final class MiniHttpServer implements AutoCloseable {

    /** What a handler answers. */
    record Response(int status, String contentType, byte[] body) {
        static Response json(byte[] body) {
            return new Response(200, "application/json", body);
        }
    }

    /** Turns one request into one response; runs on the connection's thread. */
    interface Handler {
        Response handle(String method, String path, byte[] body) throws Exception;
    }

    private static final int MAX_BODY = 4 << 20;

    private final ServerSocket socket;
    private final Handler handler;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private MiniHttpServer(ServerSocket socket, Handler handler) {
        this.socket = socket;
        this.handler = handler;
    }

    /** Listens on 127.0.0.1 (port 0: any free port) and starts accepting. */
    static MiniHttpServer start(int port, Handler handler) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
        MiniHttpServer server = new MiniHttpServer(s, handler);
        Thread.ofVirtual().name("mini-http-accept-" + s.getLocalPort()).start(server::acceptLoop);
        return server;
    }

    int port() {
        return socket.getLocalPort();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket c = socket.accept();
                c.setTcpNoDelay(true);
                open.add(c);
                Thread.ofVirtual().name("mini-http-" + port()).start(() -> serve(c));
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("bench: accept on " + port() + " failed: " + e.getMessage());
                }
                return;
            }
        }
    }

    private void serve(Socket c) {
        try (c; InputStream in = new BufferedInputStream(c.getInputStream(), 16 << 10);
             OutputStream out = new BufferedOutputStream(c.getOutputStream(), 16 << 10)) {
            while (!closed) {
                String requestLine = line(in);
                if (requestLine == null) {
                    return;
                }
                if (requestLine.isEmpty()) {
                    continue;
                }
                String[] parts = requestLine.split(" ");
                if (parts.length < 3) {
                    return;
                }
                int length = 0;
                boolean close = false;
                String h;
                while ((h = line(in)) != null && !h.isEmpty()) {
                    int colon = h.indexOf(':');
                    if (colon <= 0) {
                        continue;
                    }
                    String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                    String value = h.substring(colon + 1).trim();
                    if (name.equals("content-length")) {
                        length = Integer.parseInt(value);
                    } else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
                        close = true;
                    }
                }
                if (h == null || length < 0 || length > MAX_BODY) {
                    return;
                }
                byte[] body = in.readNBytes(length);
                if (body.length < length) {
                    return;
                }
                Response r;
                try {
                    r = handler.handle(parts[0], parts[1], body);
                } catch (Exception e) {
                    r = new Response(500, "text/plain", String.valueOf(e).getBytes(StandardCharsets.UTF_8));
                }
                byte[] payload = r.body() == null ? new byte[0] : r.body();
                String head = "HTTP/1.1 " + r.status() + " " + reason(r.status()) + "\r\nContent-Type: " + r.contentType()
                        + "\r\nContent-Length: " + payload.length + (close ? "\r\nConnection: close" : "") + "\r\n\r\n";
                out.write(head.getBytes(StandardCharsets.ISO_8859_1));
                out.write(payload);
                out.flush();
                if (close) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // the client went away; nothing to report
        } finally {
            open.remove(c);
        }
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 201 -> "Created";
            case 404 -> "Not Found";
            default -> "Status";
        };
    }

    /** One CRLF-terminated header line, or null at the end of the stream. */
    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder(64);
        int ch;
        while ((ch = in.read()) >= 0) {
            if (ch == '\n') {
                int n = b.length();
                return n > 0 && b.charAt(n - 1) == '\r' ? b.substring(0, n - 1) : b.toString();
            }
            if (b.length() > 8192) {
                throw new IOException("header line too long");
            }
            b.append((char) ch);
        }
        return b.isEmpty() ? null : b.toString();
    }

    @Override
    public void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket c : open) {
            try {
                c.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
