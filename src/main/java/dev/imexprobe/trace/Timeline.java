package dev.imexprobe.trace;

/**
 * The probe's path as JFR events (imexprobe.Request, imexprobe.DriverHop, imexprobe.PeerCall), for a wall-clock
 * account of where an exchange's time goes across both agents and their threads (docs/performance.md, "Where the
 * wall time goes"; {@code gpu/timeline.py} joins them with the caller's send and receive times). Every point is
 * {@link System#nanoTime()}, the host's monotonic clock on Linux, so points of two agents (and of a caller using
 * CLOCK_MONOTONIC) on one host line up. Committed only while a recording enables them; nothing where the runtime
 * has no jdk.jfr (a trimmed jlink image): the event classes are then never loaded.
 */
public final class Timeline {

    private static final boolean JFR = ModuleLayer.boot().findModule("jdk.jfr").isPresent();

    private Timeline() {
    }

    /** Whether a recording takes requests now (the caller then builds the route's name). */
    public static boolean requests() {
        return JFR && TimelineEvents.requestEnabled();
    }

    /** GET /probe or POST /v1/imports: Tomcat began reading it, the first filter got it, the answer was written. */
    public static void request(String route, int status, long parsed, long entered, long answered) {
        if (JFR) {
            TimelineEvents.request(route, status, parsed, entered, answered);
        }
    }

    /** Whether a recording takes driver-pool hops now (the caller then builds the stage names). */
    public static boolean hops() {
        return JFR && TimelineEvents.hopEnabled();
    }

    /** A stage list handed to the driver pool: submitted, started on the worker, finished, caller resumed. */
    public static void hop(String stages, long submitted, long started, long finished, long resumed) {
        if (JFR) {
            TimelineEvents.hop(stages, submitted, started, finished, resumed);
        }
    }

    /** A call to another agent: began (body written, signed), exchanged (answer read), parsed. */
    public static void peerCall(String path, long began, long sending, long answered, long parsed) {
        if (JFR) {
            TimelineEvents.peerCall(path, began, sending, answered, parsed);
        }
    }
}
