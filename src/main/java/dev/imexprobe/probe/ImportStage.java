package dev.imexprobe.probe;

import dev.imexprobe.cuda.Allocation;
import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.HandleType;

/** cuMemImportFromShareableHandle on the importer's GPU: the call the seed case fails with 101. */
public final class ImportStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.IMPORT;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        CuCall<Allocation> imported;
        if (s.handleType == HandleType.FABRIC) {
            imported = Allocation.importFabric(s.driver, s.importerOrdinal, s.fabricHandle, s.sizeBytes);
        } else {
            int fd = s.importedFd >= 0 ? s.importedFd : s.exportedFd;
            imported = Allocation.importPosixFd(s.driver, s.importerOrdinal, fd, s.sizeBytes);
        }
        if (!imported.ok()) {
            return StageOutcome.failed(imported.result(), "cuMemImportFromShareableHandle(" + s.handleType
                    + ") on GPU " + s.importerOrdinal + " returned " + imported.result().name());
        }
        s.imported = imported.value();
        return StageOutcome.ok(CuResult.SUCCESS, "imported on GPU " + s.importerOrdinal);
    }
}
