package dev.imexprobe.peer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.MalformedURLException;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URL;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One HTTP/1.1 exchange with a peer agent, on the calling thread: the JDK's blocking {@link HttpURLConnection}
 * with its keep-alive cache. Chosen over {@code java.net.http.HttpClient} for speed: on loopback the async client
 * costs 0.46–0.97 ms per call against 0.14–0.38 ms here (docs/performance.md), since it hands every exchange
 * between the caller, its selector thread and its executor, and a probe makes one to three such calls.
 *
 * <p>A deadline covers the whole answer, headers and body: a peer that trickles its body would otherwise hold the
 * caller for as long as each read keeps arriving within the read timeout. One watchdog thread per instance
 * disconnects calls past their deadline. Every call of an instance has the same timeout, so deadlines arrive in
 * the order calls start: the watchdog sleeps until the oldest one and a new call never has to wake it.
 */
public final class PeerHttp implements AutoCloseable {

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

    private static final int RUNNING = 0;
    private static final int DONE = 1;
    private static final int EXPIRED = 2;

    private final int connectMillis;
    private final int readMillis;
    private final long timeoutNanos;
    private final int maxReply;
    private final ConcurrentLinkedQueue<Call> watched = new ConcurrentLinkedQueue<>();
    private final Thread watchdog;
    private volatile boolean closed;

    public PeerHttp(Duration connectTimeout, Duration timeout, int maxReply) {
        if (timeout.isNegative() || timeout.isZero() || connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("peer timeouts must be positive: connect " + connectTimeout
                    + ", answer " + timeout);
        }
        this.connectMillis = millis(connectTimeout);
        this.readMillis = millis(timeout);
        this.timeoutNanos = timeout.toNanos();
        this.maxReply = maxReply;
        this.watchdog = Thread.ofPlatform().daemon().name("imexprobe-peer-deadline").start(this::watch);
    }

    private static int millis(Duration d) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, d.toMillis()));
    }

    public Duration timeout() {
        return Duration.ofNanos(timeoutNanos);
    }

    /**
     * Sends one request to {@code http://target path} and reads the whole answer.
     *
     * @param body null for none
     * @throws IllegalArgumentException target is not a host:port
     * @throws ConnectTimeout           no connection within the connect timeout
     * @throws NoAnswer                 no whole answer within the timeout
     * @throws TooLarge                 the body is larger than the cap
     * @throws IOException              anything else on the way (refused, reset, unknown host)
     */
    public Answer exchange(String target, String method, String path, byte[] body, Map<String, String> headers)
            throws IOException {
        URL url = url(target, path);
        HttpURLConnection c = (HttpURLConnection) url.openConnection(Proxy.NO_PROXY);
        c.setConnectTimeout(connectMillis);
        c.setReadTimeout(readMillis);
        c.setInstanceFollowRedirects(false);
        c.setUseCaches(false);
        c.setRequestMethod(method);
        headers.forEach(c::setRequestProperty);
        c.setDoOutput(body != null);
        Call call = new Call(c, System.nanoTime() + timeoutNanos);
        watched.add(call);
        try {
            try {
                c.connect();
            } catch (SocketTimeoutException e) {
                throw new ConnectTimeout("connect to " + target + " timed out");
            }
            if (body != null) {
                try (OutputStream o = c.getOutputStream()) {
                    o.write(body);
                }
            }
            int status = c.getResponseCode();
            InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream();
            byte[] reply = in == null ? new byte[0] : read(in);
            if (call.finish()) {
                return new Answer(status, reply);
            }
        } catch (SocketTimeoutException e) {
            call.finish(); // a read that timed out: no answer, as when the watchdog is first
        } catch (IOException | RuntimeException e) {
            if (call.finish()) {
                c.disconnect();
                throw e;
            }
            // else the watchdog closed the socket, and that is what failed the call
        }
        c.disconnect();
        throw new NoAnswer();
    }

    private static URL url(String target, String path) {
        try {
            URI uri = URI.create("http://" + target + path);
            if (uri.getHost() == null || uri.getPort() < 0) {
                throw new IllegalArgumentException("no host:port");
            }
            return uri.toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** Reads to the end, at most the cap; the stream is read to its end so the connection can be kept. */
    private byte[] read(InputStream in) throws IOException {
        try (in) {
            byte[] bytes = in.readNBytes(maxReply + 1);
            if (bytes.length > maxReply) {
                throw new TooLarge(maxReply);
            }
            return bytes;
        }
    }

    /** Stops the watchdog; calls still running keep their read timeout only. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(watchdog);
    }

    private void watch() {
        while (!closed) {
            Call head = watched.peek();
            if (head == null) {
                // a call starting now has its deadline a whole timeout away: no need to be woken for it
                LockSupport.parkNanos(timeoutNanos);
                continue;
            }
            if (head.state.get() != RUNNING) {
                watched.poll();
                continue;
            }
            long wait = head.deadline - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
                continue;
            }
            watched.poll();
            head.expire();
        }
    }

    private static final class Call {
        final HttpURLConnection connection;
        final long deadline;
        final AtomicInteger state = new AtomicInteger(RUNNING);

        Call(HttpURLConnection connection, long deadline) {
            this.connection = connection;
            this.deadline = deadline;
        }

        /** @return false when the watchdog got there first */
        boolean finish() {
            return state.compareAndSet(RUNNING, DONE);
        }

        void expire() {
            if (state.compareAndSet(RUNNING, EXPIRED)) {
                // closes the socket: a read blocked in it ends with an exception at once
                connection.disconnect();
            }
        }
    }
}
