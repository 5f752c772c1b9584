package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;

/**
 * Reads the imported memory back and compares it with the exporter's pattern. Without a seed (a handle
 * another program exported) there is nothing to compare with, and the stage says so.
 */
public final class VerifyStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.VERIFY;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        if (s.seed == null) {
            return StageOutcome.skipped("no seed: the handle was exported by another program, so its contents "
                    + "are unknown; import, map and access were checked");
        }
        CuCall<Long> v = s.importerMapping.verify(s.seed);
        if (!v.ok()) {
            return StageOutcome.failed(v.result(), "reading the imported memory" + s.importerMapping.checkWay()
                    + " returned " + v.result().name());
        }
        if (v.value() >= 0) {
            return StageOutcome.failed(v.result(), "pattern mismatch at byte " + v.value() + " of "
                    + Sizes.human(s.sizeBytes) + ": the mapping does not show the exporter's memory");
        }
        return StageOutcome.ok(v.result(), "read back " + Sizes.human(s.sizeBytes) + s.importerMapping.checkWay()
                + ": pattern matches");
    }
}
