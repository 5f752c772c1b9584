package dev.imexprobe.peer;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
 * docs/performance.md) and over {@link java.net.HttpURLPeerConnection} because its deadline could not be made to hold:
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
        /** How its message starts (a caller's PeerCall detail). */
        public static final String MESSAGE = "answer larger than ";

        TooLarge(int cap) {
            super(MESSAGE + cap + " bytes");
        }
    }

    /** Idle connections kept per peer; more are closed when handed back. */
    private static final int IDLE_PER_PEER = 8;

    private final int connectMillis;
    private final long timeoutNanos;
    private final int maxReply;
    private final Map<String, ConcurrentLinkedDeque<PeerConnection>> idle = new ConcurrentHashMap<>();
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
        PeerConnection kept = pooled(target);
        if (kept != null) {
            try {
                return exchange(kept, target, request, deadline, true);
            } catch (PeerConnection.Stale e) {
                // the peer closed the kept-alive connection before our request reached it: once more, on a new one
            }
        }
        return exchange(connect(uri, target, deadline), target, request, deadline, false);
    }

    private Answer exchange(PeerConnection c, String target, byte[] request, long deadline, boolean reused)
            throws IOException {
        boolean keep = false;
        try {
            c.send(request, reused);
            PeerConnection.Reply reply = c.read(deadline, maxReply, reused);
            keep = reply.keepAlive() && !closed;
            return new Answer(reply.status(), reply.body());
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

    private PeerConnection connect(URI uri, String target, long deadline) throws IOException {
        InetAddress address = address(uri.getHost(), target, deadline);
        long left = PeerConnection.remainingMillis(deadline);
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(address, uri.getPort()), (int) Math.min(connectMillis, left));
            return new PeerConnection(s);
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
        long wait = Math.min(connectMillis, PeerConnection.remainingMillis(deadline));
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

    private PeerConnection pooled(String target) {
        ConcurrentLinkedDeque<PeerConnection> q = idle.get(target);
        return q == null ? null : q.pollFirst();
    }

    private void release(String target, PeerConnection c) {
        ConcurrentLinkedDeque<PeerConnection> q = idle.computeIfAbsent(target, t -> new ConcurrentLinkedDeque<>());
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
            for (PeerConnection c = q.poll(); c != null; c = q.poll()) {
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
}
