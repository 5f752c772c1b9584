package dev.imexprobe.probe;

import dev.imexprobe.cuda.Allocation;
import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.Mapping;

import java.util.EnumSet;

/**
 * cuMemCreate on the exporter's GPU, then the exporter's own mapping and the pattern written into it. Every
 * export is a fresh pattern buffer: cuMemCreate does not clear memory, and an importer must never read
 * what another program left behind.
 */
public final class CreateStage implements ProbeStage {

    @Override
    public Stage stage() {
        return Stage.CREATE;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        CuCall<Allocation> created = Allocation.create(s.driver, s.exporterOrdinal, s.sizeBytes,
                EnumSet.of(s.handleType));
        if (!created.ok()) {
            return StageOutcome.failed(created.result(), "cuMemCreate(" + s.handleType + ", " + Sizes.human(s.sizeBytes)
                    + ") on GPU " + s.exporterOrdinal + " returned " + created.result().name());
        }
        s.created = created.value();
        CuCall<Mapping> reserved = Mapping.reserve(s.driver, s.exporterOrdinal, s.sizeBytes, 0);
        if (!reserved.ok()) {
            return StageOutcome.failed(reserved.result(),
                    "cuMemAddressReserve for the exporter's own mapping returned " + reserved.result().name());
        }
        s.exporterMapping = reserved.value();
        CuResult r = s.exporterMapping.map(s.created);
        if (!r.ok()) {
            return StageOutcome.failed(r, "cuMemMap of the new allocation into the exporter returned " + r.name());
        }
        r = s.exporterMapping.setAccess(s.exporterOrdinal);
        if (!r.ok()) {
            return StageOutcome.failed(r, "cuMemSetAccess on the exporter's own mapping returned " + r.name());
        }
        long seed = s.seed != null ? s.seed : Seeds.next();
        r = s.exporterMapping.fill(seed);
        if (!r.ok()) {
            return StageOutcome.failed(r, "writing the pattern" + s.exporterMapping.fillWay() + " returned " + r.name());
        }
        return StageOutcome.ok(CuResult.SUCCESS, "created " + Sizes.human(s.sizeBytes) + " on GPU "
                + s.exporterOrdinal + " (" + s.handleType + ") and wrote the pattern" + s.exporterMapping.fillWay());
    }
}
