package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.Mapping;

/** cuMemAddressReserve: a virtual address range on the importer for the imported memory. */
public final class ReserveStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.RESERVE;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        CuCall<Mapping> m = Mapping.reserve(s.driver, s.importerOrdinal, s.sizeBytes, 0);
        if (!m.ok()) {
            return StageOutcome.failed(m.result(), "cuMemAddressReserve(" + Sizes.human(s.sizeBytes) + ") returned "
                    + m.result().name());
        }
        s.importerMapping = m.value();
        return StageOutcome.ok(CuResult.SUCCESS, "reserved " + Sizes.human(s.sizeBytes) + " of address space");
    }
}
