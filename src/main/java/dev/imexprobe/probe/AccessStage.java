package dev.imexprobe.probe;

/** cuMemSetAccess for the importer's GPU: where users have seen 1 INVALID_VALUE. */
public final class AccessStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.ACCESS;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        return StageOutcome.of(s.importerMapping.setAccess(s.importerOrdinal),
                "cuMemSetAccess(READWRITE, GPU " + s.importerOrdinal + ")",
                "read-write access granted to GPU " + s.importerOrdinal);
    }
}
