package dev.imexprobe.web;

import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.probe.ExportLimits;
import dev.imexprobe.probe.ImportReply;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;
import java.util.Set;

/**
 * Imports a FABRIC handle exported elsewhere: by a peer agent (with the seeds, so the pattern is checked and
 * written back) or by any other program (without a seed: import, map and access only). Answers with stages,
 * never with the memory's contents.
 */
@RestController
public class ImportController {

    private static final Set<String> FIELDS = Set.of("handle", "handleType", "sizeBytes", "gpu", "seed",
            "writebackSeed", "exporterNode");

    private final Importer importer;
    private final NodeService node;
    private final ExportLimits limits;

    public ImportController(Importer importer, NodeService node, ExportLimits limits) {
        this.importer = importer;
        this.node = node;
        this.limits = limits;
    }

    @PostMapping(path = "/v1/imports", produces = MediaType.APPLICATION_JSON_VALUE)
    public ImportReply importHandle(@RequestBody(required = false) byte[] body) {
        long start = System.nanoTime();
        RequestFields f = RequestFields.parse(body, FIELDS);
        String type = f.requiredText("handleType", "FABRIC");
        if (HandleType.parse(type) != HandleType.FABRIC) {
            throw ApiException.invalid("handleType must be FABRIC (only fabric handles travel over HTTP), got '"
                    + RequestFields.truncate(type) + "'");
        }
        FabricHandle handle;
        try {
            handle = FabricHandle.fromBase64(f.requiredText("handle", "the 64-byte FABRIC handle as base64"));
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        }
        Long sizeField = f.wholeNumber("sizeBytes");
        if (sizeField == null) {
            throw ApiException.invalid("sizeBytes is required: the size the exporter allocated");
        }
        GpuDevice gpu = Requests.gpu(node, f.gpu("gpu"));
        long size = Requests.size(sizeField, gpu, limits.maxBytes());
        Long seed = f.wholeNumber("seed");
        Long writebackSeed = f.wholeNumber("writebackSeed");
        if (writebackSeed != null && seed == null) {
            throw ApiException.invalid("writebackSeed needs seed: write-back is only checked after a verified read");
        }
        String exporterNode = f.text("exporterNode");
        dev.imexprobe.finding.Finding refused = importer.refusal(gpu.index());
        if (refused != null) {
            // compute mode or MIG: no context is created on this GPU; the answer is the finding, not an error
            return new ImportReply(Verdict.NOT_PROBED, (System.nanoTime() - start) / 1e9, node.identity().node(),
                    node.identity().id(), gpu.index(), gpu.uuid(), importer.importFabric(handle, size, gpu.index(),
                    seed, writebackSeed), refused);
        }
        List<StageResult> stages = importer.importFabric(handle, size, gpu.index(), seed, writebackSeed);
        String self = node.identity().node();
        return new ImportReply(Verdict.of(StageEngine.passed(stages)), (System.nanoTime() - start) / 1e9, self,
                node.identity().id(), gpu.index(), gpu.uuid(), stages,
                ProbeDiagnosis.diagnose(stages, self.equals(exporterNode), exporterNode, self));
    }
}
