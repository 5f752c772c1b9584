package dev.imexprobe.probe;

/** Stages for the engine's and the driver pool's tests: a name, what the stage does, and what it answers. */
final class TestStages {

    private TestStages() {
    }

    /** A stage that calls the driver (so it runs on the pool), runs {@code body} and answers {@code outcome}. */
    static ProbeStage stage(Stage name, Runnable body, StageOutcome outcome) {
        return new ProbeStage() {
            @Override
            public Stage stage() {
                return name;
            }

            @Override
            public StageOutcome run(ProbeSession s) {
                body.run();
                return outcome;
            }
        };
    }
}
