package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.PatternCheck;

/**
 * Reads the imported memory back and compares it with the exporter's pattern. Without a seed (a handle
 * another program exported) there is nothing to compare with, and the stage says so.
 *
 * <p>Where the compare kernel reads it (the SMs, as jobs' kernels do), a copy engine reads one window of it at the
 * same time, as a job's {@code cudaMemcpy} would: the two paths through the mapping are different hardware, and a
 * node where one of them does not see the exporter's memory is broken for the jobs that use it. The window moves
 * with the seed, so successive probes cover the whole range.
 */
public final class VerifyStage implements ProbeStage {

    /**
     * The copy engine's window: enough to prove the path, small enough to cost little (measured on the H200: 0.03 ms
     * copied after the kernel; the whole 2 MiB copied and compared: 0.2 ms).
     */
    static final long COPY_WINDOW_BYTES = 64 * 1024;

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
        long bytes = Math.min(COPY_WINDOW_BYTES, s.sizeBytes);
        long offset = copyWindowOffset(s.seed, s.sizeBytes, bytes);
        CuCall<PatternCheck> v = s.importerMapping.verify(s.seed, offset, bytes);
        if (!v.ok()) {
            return StageOutcome.failed(v.result(), "reading the imported memory" + s.importerMapping.checkWay()
                    + " returned " + v.result().name());
        }
        PatternCheck c = v.value();
        if (c.mismatch() >= 0) {
            return StageOutcome.failed(v.result(), "pattern mismatch at byte " + c.mismatch() + " of "
                    + Sizes.human(s.sizeBytes) + ": the mapping does not show the exporter's memory");
        }
        String read = "read back " + Sizes.human(s.sizeBytes) + s.importerMapping.checkWay();
        if (c.windowRead()) {
            String window = Sizes.human(bytes) + " at byte " + offset + " by a copy engine (" + c.windowCall() + ")";
            if (!c.windowResult().ok()) {
                return StageOutcome.failed(c.windowResult(), read + ", matching; reading " + window + " returned "
                        + c.windowResult().name() + ": copies through the mapping fail where the SMs' reads succeed");
            }
            if (c.windowMismatch() >= 0) {
                return StageOutcome.failed(v.result(), read + ", matching; reading " + window
                        + " found a mismatch at byte " + c.windowMismatch()
                        + ": copies through the mapping do not show the exporter's memory where the SMs' reads do");
            }
            read += ", and " + window;
        }
        return StageOutcome.ok(v.result(), read + ": pattern matches");
    }

    /** A window-aligned offset drawn from the seed (itself random per probe), within {@code size}. */
    static long copyWindowOffset(long seed, long size, long bytes) {
        long windows = Math.max(1, size / bytes);
        return Math.floorMod(Long.rotateLeft(seed * 0x9E3779B97F4A7C15L, 31), windows) * bytes;
    }
}
