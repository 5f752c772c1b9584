package dev.imexprobe.bench;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;

import java.security.SecureRandom;
import java.util.List;

/**
 * Documents shaped and sized like the ones agents exchange in a push probe, for the HTTP floor and the JSON
 * micro-measurements: the POST /v1/imports body as {@code Prober} builds it and an ImportReply as
 * {@code ImportController} answers it (same fields, same sentences, same number of stages).
 */
final class Payloads {

    static final long SIZE = 2L << 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Payloads() {
    }

    static FabricHandle randomHandle() {
        byte[] b = new byte[FabricHandle.SIZE];
        RANDOM.nextBytes(b);
        return FabricHandle.of(b);
    }

    /** The body PushExchange sends (field for field). */
    static ImportRequest importBody(FabricHandle handle, long size, String gpuUuid, long seed, Long writebackSeed,
                                    String exporterNode, String exporterGpu) {
        return new ImportRequest(handle.base64(), "FABRIC", size, gpuUuid, seed, writebackSeed, exporterNode,
                exporterGpu);
    }

    /** An importer's passing reply, with the importer stages' own sentences. */
    static ImportReply importReply(String node, String agentId, String gpuUuid) {
        String ok = CuResult.SUCCESS.name();
        List<StageResult> stages = List.of(
                new StageResult(Stage.IMPORT, StageStatus.OK, 0, ok, 0.000263, "imported on GPU 0"),
                new StageResult(Stage.RESERVE, StageStatus.OK, 0, ok, 0.000137,
                        "reserved 2 MiB of virtual address space on GPU 0"),
                new StageResult(Stage.MAP, StageStatus.OK, 0, ok, 0.000108, "mapped the imported handle"),
                new StageResult(Stage.ACCESS, StageStatus.OK, 0, ok, 0.000219, "GPU 0 has read-write access"),
                new StageResult(Stage.VERIFY, StageStatus.OK, 0, ok, 0.000920, "read back 2 MiB (compared on the GPU by the compare kernel): pattern matches"),
                new StageResult(Stage.WRITEBACK, StageStatus.OK, 0, ok, 0.000900,
                        "importer wrote the write-back pattern; the exporter checks it"),
                new StageResult(Stage.RELEASE, StageStatus.OK, 0, ok, 0.000300, "released 2 driver resources"));
        return new ImportReply(Verdict.PASS, 0.004, node, agentId, 0, gpuUuid, stages, null);
    }

    static String uuid(int n) {
        String hex = String.format("%032x", (long) n * 0x9E3779B97F4A7C15L & Long.MAX_VALUE);
        return "GPU-" + hex.substring(0, 8) + "-" + hex.substring(8, 12) + "-" + hex.substring(12, 16) + "-"
                + hex.substring(16, 20) + "-" + hex.substring(20, 32);
    }
}
