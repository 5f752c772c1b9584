package dev.imexprobe.peer;

import dev.imexprobe.api.ExportReply;
import dev.imexprobe.api.ImportReply;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.peer.Prober.Peer;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.TransferStage;
import dev.imexprobe.probe.Verdict;

import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a peer's answer is worth: whether it can be judged at all (every stage named, none missing), what a
 * call that failed means as a transfer stage and a finding, and who a /v1/node answer says the peer is.
 */
final class PeerAnswers {

    /** The stages an importer reports, all of them on every path (skipped ones say why). */
    private static final Stage[] IMPORTER_STAGES = Importer.REPORTED.toArray(Stage[]::new);

    private PeerAnswers() {
    }

    /**
     * A peer's answer that parsed but cannot be judged (stages missing, unnamed or without a status) becomes a
     * garbled call: a peer that leaves out its verify must not make a probe pass.
     */
    static <T> PeerCall<T> checked(PeerCall<T> call, Function<T, String> problem) {
        if (!call.ok()) {
            return call;
        }
        String why = problem.apply(call.value());
        return why == null ? call : PeerCall.failed(PeerCall.Kind.GARBLED, call.httpStatus(), why, call.nanos());
    }

    /** Why an importer's answer cannot be judged, or null. */
    static String importerProblem(ImportReply r) {
        return incomplete(r.stages(), IMPORTER_STAGES);
    }

    /** Why an exporter's answer cannot be judged, or null. */
    static String exporterProblem(ExportReply r) {
        String missing = incomplete(r.stages(), Stage.CREATE, Stage.EXPORT);
        if (missing != null) {
            return missing;
        }
        boolean exported = r.verdict() == Verdict.PASS && r.handle() != null;
        // A failure must say which stage failed, a success must carry the handle, a GPU that takes no context must
        // say why: else nothing can be judged.
        return exported || StageEngine.firstFailure(r.stages()) != null
                || r.verdict() == Verdict.NOT_PROBED && r.finding() != null ? null
                : "the exporter's answer has neither a handle, nor a failed stage, nor why its GPU was not probed";
    }

    /** Why these stages cannot be trusted, or null when every stage has a name and a status and none is missing. */
    static String incomplete(List<StageResult> stages, Stage... required) {
        if (stages == null) {
            return "the peer's answer has no stages";
        }
        // Loops, not streams: this runs on every exchange, and the agents' C1 compiles a stream pipeline poorly.
        EnumSet<Stage> present = EnumSet.noneOf(Stage.class);
        for (StageResult s : stages) {
            if (s == null || s.name() == null || s.status() == null) {
                return "the peer's answer has a stage without name or status";
            }
            present.add(s.name());
        }
        List<String> missing = null;
        for (Stage r : required) {
            if (!present.contains(r)) {
                if (missing == null) {
                    missing = new ArrayList<>();
                }
                missing.add(r.label());
            }
        }
        return missing == null ? null : "the peer's answer lacks stages: " + String.join(", ", missing);
    }

    static StageResult transferFailure(PeerCall<?> call) {
        StageStatus status = call.kind() == PeerCall.Kind.TIMEOUT ? StageStatus.TIMEOUT : StageStatus.FAILED;
        String detail = call.ok() ? "the peer's answer has no stages" : call.detail();
        return TransferStage.of(status, call.nanos(), detail);
    }

    static Finding peerFinding(String target, PeerCall<?> call) {
        return peerFinding(target, call, Stage.TRANSFER);
    }

    /** As above, for a call made for {@code stage} (a pull's write-back check is asked of the exporter). */
    static Finding peerFinding(String target, PeerCall<?> call, Stage stage) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("peer", target);
        evidence.put("stage", stage.label());
        evidence.put("detail", call.ok() ? "the peer's answer has no stages" : call.detail());
        if (call.httpStatus() > 0) {
            evidence.put("httpStatus", call.httpStatus());
        }
        FindingCode code = switch (call.kind()) {
            case UNREACHABLE -> FindingCode.PEER_UNREACHABLE;
            case TIMEOUT -> FindingCode.TIMEOUT;
            case REJECTED -> FindingCode.PEER_REJECTED;
            case UNSIGNED -> FindingCode.NO_AUTH_TOKEN;
            case GARBLED, OK -> FindingCode.PEER_ERROR;
        };
        return code.finding(evidence);
    }

    /** Who a /v1/node answer says the peer is, or null when it does not describe an imexprobe agent. */
    static Peer parsePeer(String target, JsonNode node) {
        JsonNode agent = node.get("agent");
        JsonNode gpus = node.get("gpus");
        if (agent == null || !agent.hasNonNull("node") || gpus == null || !gpus.isArray()) {
            return null;
        }
        List<GpuSelector.Gpu> list = new ArrayList<>();
        for (JsonNode g : gpus) {
            if (g.hasNonNull("uuid") && g.has("index")) {
                list.add(new GpuSelector.Gpu(g.get("index").asInt(), g.get("uuid").asString(),
                        g.hasNonNull("imexDomain") ? g.get("imexDomain").asString() : null,
                        g.hasNonNull("notProbed") ? g.get("notProbed").asString() : null));
            }
        }
        return new Peer(target, agent.get("node").asString(), agent.hasNonNull("id") ? agent.get("id").asString() : null,
                List.copyOf(list), node.hasNonNull("channelMode") ? node.get("channelMode").asString() : null);
    }
}
