package dev.imexprobe.peer;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Locale;

import static dev.imexprobe.peer.PeerHttp.ANSWERING;

/**
 * One kept-alive socket to a peer and its read buffer, for {@link PeerHttp}: writes a request, reads one HTTP/1.1
 * answer (status line, head, a body by length, chunks or to the end). Every blocking read is bounded by what is left
 * of the exchange's deadline: the socket's timeout is set to it before each read, so no trickle outlasts it.
 */
final class PeerConnection {

    /** The head of an answer is bounded like its body: a peer cannot make us buffer without end. */
    static final int MAX_HEAD = 16 * 1024;

    record Reply(int status, byte[] body, boolean keepAlive) {
    }

    /** A kept-alive connection the peer had already closed: nothing of the answer was read. */
    static final class Stale extends IOException {
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] buf = new byte[8192];
    private int pos;
    private int end;
    private long deadline;

    PeerConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /** Writes a whole request; on a reused connection a failure means the peer had closed it ({@link Stale}). */
    void send(byte[] request, boolean reused) throws IOException {
        try {
            out.write(request);
            out.flush();
        } catch (IOException e) {
            if (reused) {
                throw new Stale();
            }
            throw e;
        }
    }

    void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing more to do with it
        }
    }

    /** What is left of a deadline ({@link System#nanoTime()} based), in whole milliseconds; none left is no answer. */
    static long remainingMillis(long deadline) throws PeerHttp.NoAnswer {
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
            throw new PeerHttp.NoAnswer();
        }
        return left;
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
        // One cap for the whole head, interim answers (100 Continue, 103 Early Hints) included: they are read past,
        // for the final answer follows them on this connection, and one left unread would answer the next call.
        int[] headLeft = {MAX_HEAD};
        int code;
        long length;
        boolean chunked;
        boolean keepAlive;
        do {
            String status = line(headLeft);
            if (!status.startsWith("HTTP/1.") || status.length() < 12) {
                throw new IOException("not an HTTP/1.x answer: " + status.substring(0, Math.min(40, status.length())));
            }
            try {
                code = Integer.parseInt(status.substring(9, 12));
            } catch (NumberFormatException e) {
                throw new IOException("not an HTTP status: " + status.substring(0, Math.min(40, status.length())));
            }
            length = -1;
            chunked = false;
            keepAlive = status.startsWith("HTTP/1.1");
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
        } while (code / 100 == 1 && code != 101);
        byte[] body;
        if (code == 101) {
            throw new IOException("the peer switched protocols (101): not an answer an agent gives");
        }
        if (code == 204 || code == 304) {
            body = new byte[0];
        } else if (chunked) {
            body = chunked(cap);
        } else if (length >= 0) {
            if (length > cap) {
                throw new PeerHttp.TooLarge(cap);
            }
            body = exactly((int) length);
        } else {
            keepAlive = false;
            body = toEnd(cap);
        }
        // bytes after the answer were never asked for: the next call on this connection would read them as its own
        return new Reply(code, body, keepAlive && pos == end);
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

    /** A chunked body; an importer's answer comes as one chunk, which is returned as read, without a copy. */
    private byte[] chunked(int cap) throws IOException {
        byte[] first = null;
        java.io.ByteArrayOutputStream more = null;
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
                return more != null ? more.toByteArray() : first != null ? first : new byte[0];
            }
            long have = more != null ? more.size() : first != null ? first.length : 0;
            if (have + n > cap) {
                throw new PeerHttp.TooLarge(cap);
            }
            byte[] chunk = exactly(n);
            if (first == null) {
                first = chunk;
            } else {
                if (more == null) {
                    more = new java.io.ByteArrayOutputStream(first.length + n);
                    more.writeBytes(first);
                }
                more.writeBytes(chunk);
            }
            line(new int[] {MAX_HEAD}); // the CRLF after the chunk
        }
    }

    private byte[] toEnd(int cap) throws IOException {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        for (int c = read(); c >= 0; c = read()) {
            if (b.size() == cap) {
                throw new PeerHttp.TooLarge(cap);
            }
            b.write(c);
        }
        return b.toByteArray();
    }
}
