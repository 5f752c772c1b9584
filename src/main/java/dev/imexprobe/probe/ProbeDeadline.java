package dev.imexprobe.probe;

import java.util.function.Supplier;

/**
 * The deadline (System.nanoTime based) of the work this thread does for one caller: an on-demand probe, or a
 * preflight phase. Every peer call made within it ends by then, and so does every wait for the driver: a call still
 * inside the driver at the deadline is reported as a timeout and left to its thread, as at the driver's own deadline.
 * Unbound (the mesh), only the per-call and per-stage deadlines hold.
 */
public final class ProbeDeadline {

    /** How results and details say that the work's deadline left no time, in one wording. */
    public static final String PASSED = "the probe's deadline had passed";

    private static final ScopedValue<Long> DEADLINE = ScopedValue.newInstance();

    private ProbeDeadline() {
    }

    /** Runs {@code work} bounded by {@code deadlineNanos}. */
    public static <T> T within(long deadlineNanos, Supplier<T> work) {
        return ScopedValue.where(DEADLINE, deadlineNanos).call(work::get);
    }

    public static boolean bound() {
        return DEADLINE.isBound();
    }

    /** The deadline; call only when {@link #bound()}. */
    public static long nanos() {
        return DEADLINE.get();
    }

    /** Whether the deadline this thread works under has passed (false when there is none). */
    public static boolean past() {
        return DEADLINE.isBound() && System.nanoTime() - DEADLINE.get() >= 0;
    }
}
