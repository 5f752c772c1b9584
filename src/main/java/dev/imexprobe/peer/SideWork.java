package dev.imexprobe.peer;

/**
 * Work a thread does on the side while it waits for something else ({@link Prober#WHILE_CHECKING}): run only when
 * the wait is expected to last more than twice as long as the work last took, so that it does not delay what it
 * waits for.
 */
final class SideWork {

    /** How long the work last took; halved each time it is left out, so one slow run (a GC) does not stop it. */
    private volatile long tookNanos;

    /** Runs {@code work} if {@code leftNanos} of waiting are expected; whether it ran. Its exceptions are dropped. */
    boolean runIfTime(long leftNanos, Runnable work) {
        long took = tookNanos;
        if (leftNanos <= 2 * took || leftNanos <= 0) {
            tookNanos = took / 2;
            return false;
        }
        long t = System.nanoTime();
        try {
            work.run();
        } catch (RuntimeException e) {
            // on the side: what waits does not depend on it
        }
        tookNanos = System.nanoTime() - t;
        return true;
    }
}
