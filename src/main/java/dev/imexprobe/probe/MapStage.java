package dev.imexprobe.probe;

/** cuMemMap of the imported handle into the reserved range. */
public final class MapStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.MAP;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        return StageOutcome.of(s.importerMapping.map(s.imported), "cuMemMap of the imported handle",
                "mapped the imported memory");
    }
}
