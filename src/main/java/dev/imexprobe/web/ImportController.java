package dev.imexprobe.web;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.probe.ExportLimits;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import jakarta.validation.Valid;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;

/**
 * Imports a FABRIC handle exported elsewhere: by a peer agent (with the seeds, so the pattern is checked and
 * written back) or by any other program (without a seed: import, map and access only). Answers with stages,
 * never with the memory's contents.
 */
@RestController
public class ImportController {

    private final Importer importer;
    private final NodeService node;
    private final ExportLimits limits;

    public ImportController(Importer importer, NodeService node, ExportLimits limits) {
        this.importer = importer;
        this.node = node;
        this.limits = limits;
    }

    /** The import; {@code request} is valid (MVC's {@code @Valid}, or {@code Wire.read} on another path). */
    @PostMapping(path = "/v1/imports", produces = MediaType.APPLICATION_JSON_VALUE)
    public ImportReply importHandle(@Valid @RequestBody ImportRequest request) {
        return importHandle(request, null);
    }

    /** As above; {@code contentsDone} as {@link Importer#importFabric(dev.imexprobe.cuda.FabricHandle, long, int,
     * Long, Long, Runnable)} says (the direct route commits the answer's head then). */
    public ImportReply importHandle(ImportRequest request, Runnable contentsDone) {
        long start = System.nanoTime();
        GpuDevice gpu = Requests.gpu(node, request.gpu());
        long size = Requests.size(request.sizeBytes(), gpu, limits.maxBytes());
        String exporterNode = request.exporterNode();
        List<StageResult> stages = importer.importFabric(request.fabricHandle(), size, gpu.index(), request.seed(),
                request.writebackSeed(), contentsDone);
        Finding refused = importer.refusal(gpu.index());
        if (refused != null) {
            // compute mode, MIG or no fabric memory: no context is created on this GPU (no stage ran); the answer is
            // the finding
            return new ImportReply(Verdict.NOT_PROBED, (System.nanoTime() - start) / 1e9, node.identity().node(),
                    node.identity().id(), gpu.index(), gpu.uuid(), stages, refused);
        }
        String self = node.identity().node();
        String exporterGpu = request.exporterGpu();
        Boolean seen = exporterGpu == null ? null : node.reaches(exporterGpu);
        Finding why = ProbeDiagnosis.diagnose(stages, self.equals(exporterNode), exporterGpu,
                seen, exporterNode, self);
        return new ImportReply(ProbeDiagnosis.verdict(StageEngine.passed(stages), why),
                (System.nanoTime() - start) / 1e9, self, node.identity().id(), gpu.index(), gpu.uuid(), stages, why);
    }
}
