package dev.imexprobe.peer;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One HTTP/1.1 exchange with a peer agent, on the calling thread, over a plain {@link Socket} with a keep-alive
 * pool per peer. Chosen over {@code java.net.http.HttpClient} for speed (the async client hands every exchange
 * between the caller, a selector thread and an executor: 0.46–0.97 ms per call on loopback against ~0.12 ms here,
 * docs/performance.md) and over {@link java.net.HttpURLConnection} because its deadline could not be made to hold:
 * {@code disconnect()} on a kept-alive connection whose body is being read leaves the JDK's keep-alive stream
 * reading the remaining bytes, so a peer trickling its body one byte at a time held callers for 10–52 s against a
 * 1–2 s timeout (PeerHttpTest shows the case).
 *
 * <p>The deadline covers the whole exchange — name lookup, connect, request, headers and body. It is enforced
 * here, not by a watchdog: before every blocking read the socket's timeout is set to what is left of the deadline,
 * so no read can outlast it, however the bytes trickle.
 */
public final class PeerHttp implements AutoCloseable {

    /**
     * Run on the calling thread when the first byte of an answer arrives, before it is read and parsed: for whoever
     * acts on the answer to get ready (a driver worker woken for the work that follows it). Unbound: nothing runs.
     */
    public static final ScopedValue<Runnable> ANSWERING = ScopedValue.newInstance();

    /** What a peer answered: the status and the whole body (never more than the cap). */
    public record Answer(int status, byte[] body) {
    }

    /** The connection could not be made within the connect timeout. */
    public static final class ConnectTimeout extends IOException {
        ConnectTimeout(String message) {
            super(message);
        }
    }

    /** The answer, headers and body, did not arrive within the timeout. */
    public static final class NoAnswer extends IOException {
        NoAnswer() {
            super("no answer within the deadline");
        }
    }

    /** The body was larger than the cap; reading stopped there. */
    public static final class TooLarge extends IOException {
        TooLarge(int cap) {
            super("answer larger than " + cap + " bytes");
        }
    }

    /** The head of an answer is bounded like its body: a peer cannot make us buffer without end. */
    private static final int MAX_HEAD = 16 * 1024;
    /** Idle connections kept per peer; more are closed when handed back. */
    private static final int IDLE_PER_PEER = 8;

    private final int connectMillis;
    private final long timeoutNanos;
    private final int maxReply;
    private final Map<String, ConcurrentLinkedDeque<Connection>> idle = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** Names to addresses; the JDK's resolver, or a slow one in a test. */
    interface Resolver {
        InetAddress resolve(String host) throws IOException;
    }

    private final Resolver resolver;

    public PeerHttp(Duration connectTimeout, Duration timeout, int maxReply) {
        this(connectTimeout, timeout, maxReply, InetAddress::getByName);
    }

    PeerHttp(Duration connectTimeout, Duration timeout, int maxReply, Resolver resolver) {
        this.resolver = resolver;
        if (timeout.isNegative() || timeout.isZero() || connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("peer timeouts must be positive: connect " + connectTimeout
                    + ", answer " + timeout);
        }
        this.connectMillis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, connectTimeout.toMillis()));
        this.timeoutNanos = timeout.toNanos();
        this.maxReply = maxReply;
    }

    public Duration timeout() {
        return Duration.ofNanos(timeoutNanos);
    }

    /** One exchange under this client's own timeout. */
    public Answer exchange(String target, String method, String path, byte[] body, Map<String, String> headers)
            throws IOException {
        return exchange(target, method, path, body, headers, System.nanoTime() + timeoutNanos);
    }

    /**
     * Sends one request to {@code http://target path} and reads the whole answer before {@code deadlineNanos}
     * ({@link System#nanoTime()} based) or this client's timeout, whichever comes first.
     *
     * @param body null for none
     * @throws IllegalArgumentException target is not a host:port
     * @throws ConnectTimeout           no connection within the connect timeout
     * @throws NoAnswer                 no whole answer within the deadline
     * @throws TooLarge                 the body is larger than the cap
     * @throws IOException              anything else on the way (refused, reset, unknown host)
     */
    public Answer exchange(String target, String method, String path, byte[] body, Map<String, String> headers,
            long deadlineNanos) throws IOException {
        URI uri = uri(target, path);
        long deadline = Math.min(deadlineNanos, System.nanoTime() + timeoutNanos);
        byte[] request = request(uri, target, method, body, headers);
        Connection kept = pooled(target);
        if (kept != null) {
            try {
                return exchange(kept, target, request, deadline, true);
            } catch (Stale e) {
                // the peer closed the kept-alive connection before our request reached it: once more, on a new one
            }
        }
        return exchange(connect(uri, target, deadline), target, request, deadline, false);
    }

    /** A kept-alive connection the peer had already closed: nothing of the answer was read. */
    private static final class Stale extends IOException {
    }

    private Answer exchange(Connection c, String target, byte[] request, long deadline, boolean reused)
            throws IOException {
        boolean keep = false;
        try {
            try {
                c.out.write(request);
                c.out.flush();
            } catch (IOException e) {
                if (reused) {
                    throw new Stale();
                }
                throw e;
            }
            Reply reply = c.read(deadline, maxReply, reused);
            keep = reply.keepAlive && !closed;
            return new Answer(reply.status, reply.body);
        } catch (SocketTimeoutException e) {
            throw new NoAnswer();
        } finally {
            if (keep) {
                release(target, c);
            } else {
                c.close();
            }
        }
    }

    private static URI uri(String target, String path) {
        try {
            URI uri = URI.create("http://" + target + path);
            if (uri.getHost() == null || uri.getPort() < 0) {
                throw new IllegalArgumentException("no host:port");
            }
            return uri;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a host:port target: '" + target + "' (" + e.getMessage() + ")",
                    e);
        }
    }

    private static byte[] request(URI uri, String target, String method, byte[] body, Map<String, String> headers) {
        StringBuilder head = new StringBuilder(256).append(method).append(' ').append(uri.getRawPath());
        if (uri.getRawQuery() != null) {
            head.append('?').append(uri.getRawQuery());
        }
        head.append(" HTTP/1.1\r\nHost: ").append(target).append("\r\n");
        headers.forEach((k, v) -> {
            if (k.indexOf('\r') >= 0 || k.indexOf('\n') >= 0 || v.indexOf('\r') >= 0 || v.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("header " + k + " holds a line break");
            }
            head.append(k).append(": ").append(v).append("\r\n");
        });
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        if (body == null || body.length == 0) {
            return h;
        }
        byte[] all = new byte[h.length + body.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(body, 0, all, h.length, body.length);
        return all;
    }

    private Connection connect(URI uri, String target, long deadline) throws IOException {
        InetAddress address = address(uri.getHost(), target, deadline);
        long left = remainingMillis(deadline);
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(address, uri.getPort()), (int) Math.min(connectMillis, left));
            return new Connection(s);
        } catch (SocketTimeoutException e) {
            s.close();
            throw new ConnectTimeout("connect to " + target + " timed out");
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * The peer's address. An IP literal needs no lookup; a name is resolved on a virtual thread that the call waits
     * for no longer than the connect timeout and the deadline allow, since the system resolver has no timeout of its
     * own (a slow DNS server, a long search list) and would otherwise hold the call past its deadline.
     */
    private InetAddress address(String host, String target, long deadline) throws IOException {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        try {
            return InetAddress.ofLiteral(bare);
        } catch (IllegalArgumentException notLiteral) {
            // a name: looked up below
        }
        FutureTask<InetAddress> lookup = new FutureTask<>(() -> resolver.resolve(bare));
        Thread.ofVirtual().name("peer-resolve").start(lookup);
        long wait = Math.min(connectMillis, remainingMillis(deadline));
        try {
            return lookup.get(wait, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            lookup.cancel(true);
            throw new ConnectTimeout("resolving " + bare + " for " + target + " took longer than " + wait
                    + " ms; check the DNS server this agent uses, or give peers as IP addresses");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("resolving " + bare + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            lookup.cancel(true);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while resolving " + bare);
        }
    }

    private static long remainingMillis(long deadline) throws NoAnswer {
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
            throw new NoAnswer();
        }
        return left;
    }

    private Connection pooled(String target) {
        ConcurrentLinkedDeque<Connection> q = idle.get(target);
        return q == null ? null : q.pollFirst();
    }

    private void release(String target, Connection c) {
        ConcurrentLinkedDeque<Connection> q = idle.computeIfAbsent(target, t -> new ConcurrentLinkedDeque<>());
        if (q.size() >= IDLE_PER_PEER) {
            c.close();
            return;
        }
        q.addFirst(c);
        if (closed) {
            drain();
        }
    }

    private void drain() {
        idle.values().forEach(q -> {
            for (Connection c = q.poll(); c != null; c = q.poll()) {
                c.close();
            }
        });
    }

    /** Closes the idle connections; calls running now finish under their own deadline. */
    @Override
    public void close() {
        closed = true;
        drain();
    }

    private record Reply(int status, byte[] body, boolean keepAlive) {
    }

    /** One socket and a read buffer; every blocking read is bounded by what is left of the deadline. */
    private static final class Connection {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private final byte[] buf = new byte[8192];
        private int pos;
        private int end;
        private long deadline;

        Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // nothing more to do with it
            }
        }

        /** Refills the buffer; false at the end of the stream. */
        private boolean fill() throws IOException {
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, remainingMillis(deadline)));
            int n = in.read(buf, 0, buf.length);
            if (n <= 0) {
                return false;
            }
            pos = 0;
            end = n;
            return true;
        }

        private int read() throws IOException {
            if (pos == end && !fill()) {
                return -1;
            }
            return buf[pos++] & 0xff;
        }

        /** One line of the head without its CRLF; the head's total size is capped. */
        private String line(int[] headLeft) throws IOException {
            StringBuilder b = new StringBuilder(64);
            for (int c = read(); c != '\n'; c = read()) {
                if (c < 0) {
                    throw new EOFException("the peer closed the connection in the middle of the answer's head");
                }
                if (--headLeft[0] < 0) {
                    throw new IOException("answer head larger than " + MAX_HEAD + " bytes");
                }
                if (c != '\r') {
                    b.append((char) c);
                }
            }
            return b.toString();
        }

        Reply read(long deadline, int cap, boolean reused) throws IOException {
            this.deadline = deadline;
            int first;
            try {
                first = read();
            } catch (SocketTimeoutException e) {
                throw e;
            } catch (IOException e) {
                if (reused) {
                    throw new Stale(); // reset by a peer that had closed the idle connection
                }
                throw e;
            }
            if (first < 0) {
                if (reused) {
                    throw new Stale();
                }
                throw new EOFException("the peer closed the connection without an answer");
            }
            pos--;
            if (ANSWERING.isBound()) {
                ANSWERING.get().run();
            }
            int[] headLeft = {MAX_HEAD};
            String status = line(headLeft);
            if (!status.startsWith("HTTP/1.") || status.length() < 12) {
                throw new IOException("not an HTTP/1.x answer: " + status.substring(0, Math.min(40, status.length())));
            }
            int code;
            try {
                code = Integer.parseInt(status.substring(9, 12));
            } catch (NumberFormatException e) {
                throw new IOException("not an HTTP status: " + status.substring(0, Math.min(40, status.length())));
            }
            long length = -1;
            boolean chunked = false;
            boolean keepAlive = status.startsWith("HTTP/1.1");
            for (String h = line(headLeft); !h.isEmpty(); h = line(headLeft)) {
                int colon = h.indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = h.substring(colon + 1).trim();
                switch (name) {
                    case "content-length" -> {
                        try {
                            length = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            throw new IOException("bad Content-Length: " + value);
                        }
                    }
                    case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                    case "connection" -> keepAlive = !value.equalsIgnoreCase("close") && (keepAlive
                            || value.equalsIgnoreCase("keep-alive"));
                    default -> {
                    }
                }
            }
            byte[] body;
            if (code / 100 == 1 || code == 204 || code == 304) {
                body = new byte[0];
            } else if (chunked) {
                body = chunked(cap);
            } else if (length >= 0) {
                if (length > cap) {
                    throw new TooLarge(cap);
                }
                body = exactly((int) length);
            } else {
                keepAlive = false;
                body = toEnd(cap);
            }
            return new Reply(code, body, keepAlive);
        }

        private byte[] exactly(int n) throws IOException {
            byte[] b = new byte[n];
            int at = 0;
            while (at < n) {
                if (pos == end && !fill()) {
                    throw new EOFException("the peer closed the connection after " + at + " of " + n + " bytes");
                }
                int k = Math.min(n - at, end - pos);
                System.arraycopy(buf, pos, b, at, k);
                pos += k;
                at += k;
            }
            return b;
        }

        private byte[] chunked(int cap) throws IOException {
            java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
            for (;;) {
                String size = line(new int[] {MAX_HEAD});
                int semi = size.indexOf(';');
                int n;
                try {
                    n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                } catch (NumberFormatException e) {
                    throw new IOException("bad chunk size: " + size);
                }
                if (n < 0) {
                    throw new IOException("bad chunk size: " + size);
                }
                if (n == 0) {
                    while (!line(new int[] {MAX_HEAD}).isEmpty()) {
                        // trailers: read and dropped
                    }
                    return b.toByteArray();
                }
                if (b.size() + (long) n > cap) {
                    throw new TooLarge(cap);
                }
                b.write(exactly(n));
                line(new int[] {MAX_HEAD}); // the CRLF after the chunk
            }
        }

        private byte[] toEnd(int cap) throws IOException {
            java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
            for (int c = read(); c >= 0; c = read()) {
                if (b.size() == cap) {
                    throw new TooLarge(cap);
                }
                b.write(c);
            }
            return b.toByteArray();
        }
    }
}
