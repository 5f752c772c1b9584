package dev.imexprobe.probe;

import dev.imexprobe.cuda.Allocation;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.Mapping;

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
        int released = 0;
        CuResult first = CuResult.SUCCESS;
        String failedCall = null;
        Mapping im = s.importerMapping;
        if (im != null) {
            CuResult r = im.release();
            released++;
            if (!r.ok() && first.ok()) {
                first = r;
                failedCall = "cuMemUnmap/cuMemAddressFree on the importer";
            }
        }
        Allocation ia = s.imported;
        if (ia != null) {
            CuResult r = ia.release();
            released++;
            if (!r.ok() && first.ok()) {
                first = r;
                failedCall = "cuMemRelease of the imported handle";
            }
        }
        Mapping em = s.exporterMapping;
        if (em != null) {
            CuResult r = em.release();
            released++;
            if (!r.ok() && first.ok()) {
                first = r;
                failedCall = "cuMemUnmap/cuMemAddressFree on the exporter";
            }
        }
        Allocation ca = s.created;
        if (ca != null) {
            CuResult r = ca.release();
            released++;
            if (!r.ok() && first.ok()) {
                first = r;
                failedCall = "cuMemRelease of the exported allocation";
            }
        }
        closeFds(s);
        if (released == 0) {
            return StageOutcome.skipped("nothing to release");
        }
        return first.ok() ? StageOutcome.ok(first, "released " + released + " driver resources")
                : StageOutcome.failed(first, failedCall + " returned " + first.name());
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
