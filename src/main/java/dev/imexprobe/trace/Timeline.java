package dev.imexprobe.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The probe's path as JFR events, for a wall-clock account of where an exchange's time goes across both agents
 * and their threads (docs/performance.md, "Where the wall time goes"; {@code gpu/timeline.py} joins them with the
 * caller's send and receive times). Every point is {@link System#nanoTime()}, which is the host's monotonic clock
 * on Linux, so points of two agents (and of a caller using CLOCK_MONOTONIC) on one host line up. Committed only
 * while a recording enables them (off in the image: JVM flags start no recording); no stack traces.
 */
public final class Timeline {

    private Timeline() {
    }

    /** GET /probe or POST /v1/imports: Tomcat began reading it, the first filter got it, the answer was written. */
    @Name("imexprobe.Request")
    @Label("Probe request")
    @Category("imexprobe")
    @StackTrace(false)
    public static final class Request extends Event {
        @Label("Route")
        public String route;
        @Label("Status")
        public int status;
        @Label("Tomcat began parsing")
        @Description("System.nanoTime() when Tomcat's worker read the request line's first byte")
        public long parsedNanos;
        @Label("First filter")
        public long enteredNanos;
        @Label("Answered")
        public long answeredNanos;
    }

    /** One stage list handed to the driver pool: submitted, started on the worker, finished, caller resumed. */
    @Name("imexprobe.DriverHop")
    @Label("Driver pool hop")
    @Category("imexprobe")
    @StackTrace(false)
    public static final class DriverHop extends Event {
        @Label("Stages")
        public String stages;
        public long submittedNanos;
        public long startedNanos;
        public long finishedNanos;
        public long resumedNanos;
    }

    /** A call to another agent: began (body written, signed), exchanged (answer read), parsed. */
    @Name("imexprobe.PeerCall")
    @Label("Call to a peer")
    @Category("imexprobe")
    @StackTrace(false)
    public static final class PeerCall extends Event {
        @Label("Path")
        public String path;
        public long beganNanos;
        public long sendingNanos;
        public long answeredNanos;
        public long parsedNanos;
    }
}
