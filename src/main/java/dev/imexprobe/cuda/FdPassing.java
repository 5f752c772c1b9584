package dev.imexprobe.cuda;

/**
 * Passes a file descriptor between processes of one host over a Unix socket (SCM_RIGHTS), which is how a
 * POSIX_FD memory handle travels. Every call returns 0 or an errno value.
 */
public final class FdPassing {

    static {
        NativeLibrary.load();
    }

    private FdPassing() {
    }

    /** Binds and listens on path, which must not exist yet; out[0] = the listening socket. */
    public static native int listen(String path, int[] out);

    /** Accepts one connection and receives one descriptor from it; out[0] = the descriptor. */
    public static native int acceptFd(int server, int timeoutMillis, int[] out);

    /** Connects to path and sends fd. */
    public static native int sendFd(String path, int fd, int timeoutMillis);

    public static native int close(int fd);
}
