package dev.imexprobe.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The events behind {@link Timeline}, loaded only where the runtime has jdk.jfr; no stack traces (a stack walk per
 * event would cost more than what they measure).
 */
final class TimelineEvents {

    private TimelineEvents() {
    }

    /** GET /probe or POST /v1/imports: Tomcat began reading it, the first filter got it, the answer was written. */
    @Name("imexprobe.Request")
    @Label("Probe request")
    @Category("imexprobe")
    @StackTrace(false)
    static final class Request extends Event {
        @Label("Route")
        String route;
        @Label("Status")
        int status;
        @Label("Tomcat began parsing")
        @Description("System.nanoTime() when Tomcat's worker read the request line's first byte")
        long parsedNanos;
        @Label("First filter")
        long enteredNanos;
        @Label("Answered")
        long answeredNanos;
    }

    /** One stage list handed to the driver pool: submitted, started on the worker, finished, caller resumed. */
    @Name("imexprobe.DriverHop")
    @Label("Driver pool hop")
    @Category("imexprobe")
    @StackTrace(false)
    static final class DriverHop extends Event {
        @Label("Stages")
        String stages;
        long submittedNanos;
        long startedNanos;
        long finishedNanos;
        long resumedNanos;
    }

    /** A call to another agent: began (body written, signed), exchanged (answer read), parsed. */
    @Name("imexprobe.PeerCall")
    @Label("Call to a peer")
    @Category("imexprobe")
    @StackTrace(false)
    static final class PeerCall extends Event {
        @Label("Path")
        String path;
        long beganNanos;
        long sendingNanos;
        long answeredNanos;
        long parsedNanos;
    }

    static boolean requestEnabled() {
        return new Request().isEnabled();
    }

    static void request(String route, int status, long parsed, long entered, long answered) {
        Request e = new Request();
        e.route = route;
        e.status = status;
        e.parsedNanos = parsed;
        e.enteredNanos = entered;
        e.answeredNanos = answered;
        e.commit();
    }

    static boolean hopEnabled() {
        return new DriverHop().isEnabled();
    }

    static void hop(String stages, long submitted, long started, long finished, long resumed) {
        DriverHop e = new DriverHop();
        e.stages = stages;
        e.submittedNanos = submitted;
        e.startedNanos = started;
        e.finishedNanos = finished;
        e.resumedNanos = resumed;
        e.commit();
    }

    static void peerCall(String path, long began, long sending, long answered, long parsed) {
        PeerCall e = new PeerCall();
        if (e.isEnabled()) {
            e.path = path;
            e.beganNanos = began;
            e.sendingNanos = sending;
            e.answeredNanos = answered;
            e.parsedNanos = parsed;
            e.commit();
        }
    }
}
