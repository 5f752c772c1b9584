package dev.imexprobe.probe;

/**
 * One step of an exchange. A stage decides and explains; it never throws for a driver failure (a failure is
 * an outcome) and never times itself: {@link StageEngine} owns the order, the clock and the deadline.
 */
public interface ProbeStage {

    Stage stage();

    StageOutcome run(ProbeSession session);

    /** Release runs even after an earlier stage failed, so nothing is left behind. */
    default boolean alwaysRuns() {
        return false;
    }

    /** Stages that call the driver run on the bounded driver pool under its deadline. */
    default boolean callsDriver() {
        return true;
    }
}
