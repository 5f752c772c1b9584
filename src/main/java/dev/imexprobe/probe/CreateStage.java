package dev.imexprobe.probe;

import dev.imexprobe.cuda.Allocation;
import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.Mapping;
import dev.imexprobe.cuda.NvmlCall;

import java.util.EnumSet;

/**
 * cuMemCreate on the exporter's GPU, then the exporter's own mapping and the pattern written into it. Every
 * export is a fresh pattern buffer: cuMemCreate does not clear memory, and an importer must never read
 * what another program left behind.
 */
public final class CreateStage implements ProbeStage {

    /**
     * In the detail of a cuMemCreate that returned 2 on a GPU NVML finds full: a job holds its memory
     * (ProbeDiagnosis then names GPU_OUT_OF_MEMORY, not a failure). Where NVML finds memory free, or cannot tell, the
     * 2 is the driver's fault and stays a failure: a node whose driver refuses memory it has is broken.
     */
    static final String GPU_FULL = "; the GPU is full: NVML reports ";

    /**
     * What "full" leaves beyond the allocation, in MiB. Measured on an H100: with 8 and with 64 MiB free by
     * cuMemGetInfo's count, which NVML's matched to the MiB, cuMemCreate(2 MiB) returned 2; the driver wants room of
     * its own beyond the allocation. A GPU with a GiB more than that free is not one a job has filled.
     */
    static final long FULL_MARGIN_MIB = 1024;

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
                    + ") on GPU " + s.exporterOrdinal + " returned " + created.result().name()
                    + (created.result().code() == CuResult.OUT_OF_MEMORY.code() ? freeMemory(s) : ""));
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

    /** NVML's free memory of the exporter's GPU (no context needed), said so that a full GPU can be told apart. */
    private static String freeMemory(ProbeSession s) {
        CuCall<String> uuid = s.driver.deviceUuid(s.exporterOrdinal);
        NvmlCall<long[]> memory = uuid.ok() ? s.driver.nvmlMemory(uuid.value()) : null;
        if (memory == null || !memory.ok()) {
            return "; NVML could not tell the GPU's free memory";
        }
        long freeMiB = memory.value()[1] >> 20;
        return freeMiB < (s.sizeBytes >> 20) + FULL_MARGIN_MIB ? GPU_FULL + freeMiB + " MiB free"
                : "; NVML reports " + freeMiB + " MiB free: not a full GPU";
    }
}
