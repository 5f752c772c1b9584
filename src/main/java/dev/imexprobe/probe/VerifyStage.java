package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;

/**
 * Reads the imported memory back and compares it with the exporter's pattern. Without a seed (a handle
 * another program exported) there is nothing to compare with, and the stage says so.
 *
 * <p>Where the compare kernel read it (the SMs, as jobs' kernels do), a copy engine reads one window of it too, as a
 * job's {@code cudaMemcpy} would: the two paths through the mapping are different hardware, and a node where one
 * of them does not see the exporter's memory is broken for the jobs that use it. The window moves with the seed, so
 * successive probes cover the whole range.
 */
public final class VerifyStage implements ProbeStage {

    /** The copy engine's window: enough to prove the path, small enough to cost about 10 us (a 2 MiB copy: 0.2 ms). */
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
        CuCall<Long> v = s.importerMapping.verify(s.seed);
        if (!v.ok()) {
            return StageOutcome.failed(v.result(), "reading the imported memory" + s.importerMapping.checkWay()
                    + " returned " + v.result().name());
        }
        if (v.value() >= 0) {
            return StageOutcome.failed(v.result(), "pattern mismatch at byte " + v.value() + " of "
                    + Sizes.human(s.sizeBytes) + ": the mapping does not show the exporter's memory");
        }
        String read = "read back " + Sizes.human(s.sizeBytes) + s.importerMapping.checkWay();
        if (s.importerMapping.checksOnGpu()) {
            long bytes = Math.min(COPY_WINDOW_BYTES, s.sizeBytes);
            long offset = copyWindowOffset(s.seed, s.sizeBytes, bytes);
            String window = Sizes.human(bytes) + " at byte " + offset + " by a copy engine (cuMemcpyDtoH)";
            CuCall<Long> c = s.importerMapping.checkByCopy(s.seed, offset, bytes);
            if (!c.ok()) {
                return StageOutcome.failed(c.result(), read + ", matching; reading " + window + " returned "
                        + c.result().name() + ": copies through the mapping fail where the SMs' reads succeed");
            }
            if (c.value() >= 0) {
                return StageOutcome.failed(c.result(), read + ", matching; reading " + window
                        + " found a mismatch at byte " + c.value()
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
