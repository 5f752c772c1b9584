package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.HandleType;

/** cuMemExportToShareableHandle: 64 bytes for FABRIC, a descriptor for POSIX_FD. */
public final class ExportStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.EXPORT;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        if (s.handleType == HandleType.FABRIC) {
            CuCall<FabricHandle> h = s.created.exportFabric();
            if (!h.ok()) {
                return StageOutcome.failed(h.result(), "cuMemExportToShareableHandle(FABRIC) returned "
                        + h.result().name());
            }
            s.fabricHandle = h.value();
            return StageOutcome.ok(CuResult.SUCCESS, "exported a FABRIC handle (fingerprint "
                    + h.value().fingerprint() + ")");
        }
        CuCall<Integer> fd = s.created.exportPosixFd();
        if (!fd.ok()) {
            return StageOutcome.failed(fd.result(), "cuMemExportToShareableHandle(POSIX_FD) returned "
                    + fd.result().name());
        }
        s.exportedFd = fd.value();
        return StageOutcome.ok(CuResult.SUCCESS, "exported a POSIX file descriptor");
    }
}
