package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;

import java.util.function.Supplier;

/**
 * Unmaps, frees the address ranges and releases the handles this session holds, importer first, and closes
 * descriptors; reports the first failure. Runs even after a failure, and is safe to run twice.
 */
public final class ReleaseStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.RELEASE;
    }

    @Override
    public boolean alwaysRuns() {
        return true;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        Tally t = new Tally();
        // Importer first: its mapping refers to memory the exporter still owns.
        t.release(s.importerMapping != null ? s.importerMapping::release : null, "cuMemUnmap/cuMemAddressFree on the importer");
        t.release(s.imported != null ? s.imported::release : null, "cuMemRelease of the imported handle");
        t.release(s.exporterMapping != null ? s.exporterMapping::release : null, "cuMemUnmap/cuMemAddressFree on the exporter");
        t.release(s.created != null ? s.created::release : null, "cuMemRelease of the exported allocation");
        closeFds(s);
        if (t.released == 0) {
            return StageOutcome.skipped("nothing to release");
        }
        return t.first.ok() ? StageOutcome.ok(t.first, "released " + t.released + " driver resources")
                : StageOutcome.failed(t.first, t.failedCall + " returned " + t.first.name());
    }

    /** Counts releases and keeps the first failure with the call that made it. */
    private static final class Tally {
        int released;
        CuResult first = CuResult.SUCCESS;
        String failedCall;

        void release(Supplier<CuResult> release, String call) {
            if (release == null) {
                return;
            }
            CuResult r = release.get();
            released++;
            if (!r.ok() && first.ok()) {
                first = r;
                failedCall = call;
            }
        }
    }

    private static void closeFds(ProbeSession s) {
        if (s.importedFd >= 0) {
            s.driver.closeFd(s.importedFd);
            s.importedFd = -1;
        }
        if (s.exportedFd >= 0) {
            s.driver.closeFd(s.exportedFd);
            s.exportedFd = -1;
        }
    }
}
