package dev.imexprobe.web;

import dev.imexprobe.api.ExportReply;
import dev.imexprobe.api.ExportRequest;
import dev.imexprobe.api.ExporterInfo;
import dev.imexprobe.api.StageReply;
import dev.imexprobe.api.VerifyRequest;
import dev.imexprobe.api.Wire;
import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import jakarta.validation.Valid;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * Exports for peers: POST makes a fresh pattern buffer and returns its FABRIC handle, verify checks a peer's
 * write-back, DELETE releases. Authentication happens in {@link AgentAuthFilter} before any of this runs.
 */
@RestController
public class ExportController {

    private final ExportRegistry registry;
    private final NodeService node;

    public ExportController(ExportRegistry registry, NodeService node) {
        this.registry = registry;
        this.node = node;
    }

    @PostMapping(path = "/v1/exports", produces = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<ExportReply> create(@Valid @RequestBody ExportRequest request,
            @RequestHeader(name = PeerClient.EXPORT_FOR, required = false) String exportFor) {
        GpuDevice gpu = Requests.gpu(node, request.gpu());
        long size = Requests.size(request.sizeBytes(), gpu, registry.limits().maxBytes());
        long seed = request.seed() != null ? request.seed() : Seeds.next();
        ExportRegistry.Created created;
        try {
            created = registry.create(gpu.index(), size, seed, PeerClient.FOR_PROBE.equals(exportFor)
                    ? ExportRegistry.Holder.PROBE : ExportRegistry.Holder.MANUAL);
        } catch (ExportRegistry.CapExceededException e) {
            throw e.full() ? ApiException.full(e.getMessage(), registry.limits().ttl().toSeconds())
                    : ApiException.overCap(e.getMessage());
        }
        if (created.refused() != null) {
            // compute mode, MIG or no fabric memory: no context is created on this GPU; the answer is the finding,
            // not an error
            return ResponseEntity.ok(new ExportReply(null, null, "FABRIC", size, exporter(gpu), null, Verdict.NOT_PROBED,
                    created.stages(), created.refused()));
        }
        if (!created.ok()) {
            Finding why = ProbeDiagnosis.diagnose(created.stages(), false, null, null, node.identity().node(), null);
            return ResponseEntity.ok(new ExportReply(null, null, "FABRIC", size, exporter(gpu), null,
                    ProbeDiagnosis.verdict(false, why), created.stages(), why));
        }
        ExportRegistry.Export e = created.export();
        ExportReply reply = new ExportReply(e.id(), e.session().fabricHandle().base64(), "FABRIC", size, exporter(gpu),
                e.expiresAt(), Verdict.PASS, created.stages(), null);
        return ResponseEntity.status(HttpStatus.CREATED).body(reply);
    }

    @PostMapping(path = "/v1/exports/{id}/verify", produces = MediaType.APPLICATION_JSON_VALUE)
    public StageReply verify(@PathVariable String id, @Valid @RequestBody VerifyRequest request) {
        StageResult r = registry.verify(id, request.seed());
        if (r == null) {
            throw ApiException.unknownExport(Wire.truncate(id));
        }
        return new StageReply(r);
    }

    @DeleteMapping(path = "/v1/exports/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    public StageReply delete(@PathVariable String id) {
        StageResult r = registry.release(id);
        if (r == null) {
            throw ApiException.unknownExport(Wire.truncate(id));
        }
        return new StageReply(r);
    }

    private ExporterInfo exporter(GpuDevice gpu) {
        FabricInfo f = gpu.fabric();
        boolean registered = f != null && f.completed();
        return new ExporterInfo(node.identity().node(), node.identity().id(), gpu.uuid(), gpu.index(),
                registered ? f.cliqueId() : null, registered ? f.clusterUuid() : null);
    }
}
