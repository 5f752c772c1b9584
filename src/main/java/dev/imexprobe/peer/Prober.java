package dev.imexprobe.peer;

import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.ExportReply;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.ImportReply;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.ProbeReport;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageReply;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.TransferStage;
import dev.imexprobe.probe.Verdict;

import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A real export → import between this agent and another, stage by stage, in either direction: push (this
 * agent exports, the target imports) or pull (the target exports, this agent imports). Both halves report
 * their own stages; this class stitches them into one sequence in the order of {@link Stage}, measures the
 * transfer as the round trip minus the peer's own work, and names the finding.
 */
public final class Prober {

    private final LocalAgent self;
    private final ExportRegistry registry;
    private final Importer importer;
    private final PeerClient client;

    public Prober(LocalAgent self, ExportRegistry registry, Importer importer, PeerClient client) {
        this.self = self;
        this.registry = registry;
        this.importer = importer;
        this.client = client;
    }

    /** What to probe. Null selectors mean every GPU; null size means the exporter GPU's granularity. */
    public record Request(String target, Set<Direction> directions, String gpu, String peerGpu, Long sizeBytes,
                          boolean writeback, boolean debug) {
    }

    /** Who the target is, from its /v1/node. */
    public record Peer(String target, String node, String agentId, List<GpuSelector.Gpu> gpus) {
    }

    /**
     * Probes every selected pair in every requested direction. Throws IllegalArgumentException for a GPU
     * selector that matches nothing (the caller's mistake); everything else is a result.
     *
     * <p>The target's identity (GET /v1/node) is asked once and then trusted for {@link #IDENTITY_TTL} while
     * probes with it get through: every answer names the agent that gave it, so a target that stopped answering,
     * or answers as someone else, is asked again at once, and the probe ends as an uncached one would have.
     */
    public ProbeReport probe(Request request) {
        long start = System.nanoTime();
        KnownPeer known = identities.get(request.target());
        if (known != null && System.nanoTime() - known.askedAt() < IDENTITY_TTL.toNanos()) {
            Confirmation confirmation = new Confirmation();
            ProbeReport cached;
            try {
                cached = probeAll(request, known.peer(), start, confirmation);
            } catch (IllegalArgumentException e) {
                cached = null; // a GPU selector that the remembered GPUs do not match: ask the target itself
            }
            if (cached != null && confirmation.held()) {
                return cached;
            }
            identities.remove(request.target(), known);
            Identification fresh = identify(request.target());
            if (!fresh.ok()) {
                if (cached != null && !confirmation.mismatched()) {
                    // The target stopped answering during the probe (no one else answered in its name): what
                    // the probe found, releases included, is what an uncached probe would have reported.
                    return cached;
                }
                return new ProbeReport(request.target(), null, Verdict.FAIL, seconds(start),
                        List.of(unreachable(request.target(), fresh.failure())));
            }
            if (cached != null && fresh.peer().equals(known.peer())) {
                return cached; // the same agent as before: what the probe found stands
            }
            return probeAndRemember(request, fresh.peer(), start);
        }
        PeerCall<JsonNode> info = client.node(request.target());
        if (!info.ok()) {
            PairResult r = unreachable(request.target(), info);
            return new ProbeReport(request.target(), null, Verdict.FAIL, seconds(start), List.of(r));
        }
        Peer peer = parsePeer(request.target(), info.value());
        if (peer == null) {
            PairResult r = unreachable(request.target(), PeerCall.failed(PeerCall.Kind.GARBLED, info.httpStatus(),
                    "its /v1/node does not describe an imexprobe agent", info.nanos()));
            return new ProbeReport(request.target(), null, Verdict.FAIL, seconds(start), List.of(r));
        }
        return probeAndRemember(request, peer, start);
    }

    private ProbeReport probeAndRemember(Request request, Peer peer, long start) {
        long asked = System.nanoTime();
        Confirmation confirmation = new Confirmation();
        ProbeReport report = probeAll(request, peer, start, confirmation);
        if (confirmation.held()) {
            identities.put(request.target(), new KnownPeer(peer, asked));
        }
        return report;
    }

    private ProbeReport probeAll(Request request, Peer peer, long start, Confirmation confirmation) {
        List<GpuSelector.Gpu> mine = GpuSelector.select(request.gpu(), localGpus(), "this agent (" + self.node() + ")");
        List<GpuSelector.Gpu> theirs = GpuSelector.select(request.peerGpu(), peer.gpus(), "the target (" + peer.node() + ")");
        List<PairResult> results = new ArrayList<>();
        for (GpuSelector.Gpu m : mine) {
            for (GpuSelector.Gpu t : theirs) {
                if (request.directions().contains(Direction.PUSH)) {
                    results.add(PeerClient.pastDeadline() ? notStarted(Direction.PUSH, peer, m, t)
                            : push(peer, m, t, request, confirmation));
                }
                if (request.directions().contains(Direction.PULL)) {
                    results.add(PeerClient.pastDeadline() ? notStarted(Direction.PULL, peer, m, t)
                            : pull(peer, m, t, request, confirmation));
                }
            }
        }
        boolean pass = !results.isEmpty() && results.stream().allMatch(PairResult::passed);
        return new ProbeReport(request.target(), peer.node(), Verdict.of(pass), seconds(start), List.copyOf(results));
    }

    /** A pair the probe's deadline left no time for: reported as a timeout, never started. */
    private PairResult notStarted(Direction direction, Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs) {
        String why = "not started: the probe's deadline had passed";
        StageStitch stitch = new StageStitch();
        stitch.add(TransferStage.of(StageStatus.TIMEOUT, 0, why));
        stitch.gap(why);
        boolean push = direction == Direction.PUSH;
        return new PairResult(direction, push ? self.node() : peer.node(), push ? mine.uuid() : theirs.uuid(),
                push ? peer.node() : self.node(), push ? theirs.uuid() : mine.uuid(), Verdict.FAIL, 0,
                FindingCode.TIMEOUT.finding(Map.of("peer", peer.target(), "stage", Stage.TRANSFER.label(),
                        "detail", why)), stitch.list(), null);
    }

    /** How long a target's answer to GET /v1/node is trusted by on-demand probes. */
    static final Duration IDENTITY_TTL = Duration.ofSeconds(30);

    private final Map<String, KnownPeer> identities = new ConcurrentHashMap<>();

    private record KnownPeer(Peer peer, long askedAt) {
    }

    /**
     * Whether every exchange of a probe reached the agent it was meant for: the handle got through and the
     * answer came from the node the target said it was. Only then is its identity worth remembering.
     */
    private static final class Confirmation {
        private volatile boolean unanswered;
        private volatile boolean mismatched;

        /** {@code answered}: the call got a usable answer; {@code sameNode}: from the node the target said it was. */
        void check(boolean answered, boolean sameNode) {
            if (!answered) {
                unanswered = true;
            } else if (!sameNode) {
                mismatched = true;
            }
        }

        boolean held() {
            return !unanswered && !mismatched;
        }

        /** Some answer came from an agent other than the one the target said it was. */
        boolean mismatched() {
            return mismatched;
        }
    }

    /** Probes one pair one way (the mesh's unit of work). */
    public PairResult probePair(Peer peer, GpuSelector.Gpu local, GpuSelector.Gpu remote, Direction direction,
                                Long sizeBytes, boolean writeback) {
        Request r = new Request(peer.target(), EnumSet.of(direction), null, null, sizeBytes, writeback, false);
        Confirmation unused = new Confirmation();
        return direction == Direction.PUSH ? push(peer, local, remote, r, unused) : pull(peer, local, remote, r, unused);
    }

    /** Who a peer is, or why it could not say. */
    public record Identification(Peer peer, PeerCall<?> failure) {
        public boolean ok() {
            return peer != null;
        }
    }

    /** Asks a peer who it is (GET /v1/node). */
    public Identification identify(String target) {
        PeerCall<JsonNode> info = client.node(target);
        if (!info.ok()) {
            return new Identification(null, info);
        }
        Peer peer = parsePeer(target, info.value());
        return peer != null ? new Identification(peer, null) : new Identification(null, PeerCall.failed(
                PeerCall.Kind.GARBLED, info.httpStatus(), "its /v1/node does not describe an imexprobe agent", info.nanos()));
    }

    /**
     * The result for a pair whose target did not answer: every stage but the transfer skipped, the finding
     * naming the peer. Target node and GPU are the peer's when it was known before, else its address.
     */
    public PairResult unreachablePair(String target, Peer known, GpuSelector.Gpu local, GpuSelector.Gpu remote,
                                      PeerCall<?> call) {
        StageStitch stitch = new StageStitch();
        stitch.add(transferFailure(call));
        stitch.gap("not run: the target could not be asked who it is");
        return new PairResult(Direction.PUSH, self.node(), local.uuid(), known != null ? known.node() : target,
                remote != null ? remote.uuid() : null, Verdict.FAIL, call.nanos() / 1e9, peerFinding(target, call),
                stitch.list(), null);
    }

    // ---- push: we export, the target imports --------------------------------------------------------------

    private PairResult push(Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs, Request request,
                            Confirmation confirmation) {
        long start = System.nanoTime();
        Debug debug = new Debug(request.debug());
        long size = request.sizeBytes() != null ? request.sizeBytes() : granularity(mine.index());
        long seed = Seeds.next();
        Long writebackSeed = request.writeback() ? Seeds.next() : null;
        StageStitch stitch = new StageStitch();
        ExportRegistry.Created created = registry.create(mine.index(), size, seed);
        stitch.addAll(created.stages());
        debug.say("exported " + size + " bytes on local GPU " + mine.index() + ": " + (created.ok() ? "ok" : "failed"));
        if (!created.ok()) {
            stitch.gap("not run: the export failed");
            return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, null, start, debug);
        }
        String id = created.export().id();
        FabricHandle handle = created.export().session().fabricHandle();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("handle", handle.base64());
        body.put("handleType", "FABRIC");
        body.put("sizeBytes", size);
        body.put("gpu", theirs.uuid());
        body.put("seed", Long.toString(seed));
        if (writebackSeed != null) {
            body.put("writebackSeed", Long.toString(writebackSeed));
        }
        body.put("exporterNode", self.node());
        PeerCall<ImportReply> reply = checked(client.postImport(peer.target(), body),
                r -> incomplete(r.stages(), IMPORTER_STAGES));
        debug.say("POST /v1/imports on " + peer.target() + ": " + describe(reply));
        confirmation.check(reply.ok(), reply.ok() && peer.node().equals(reply.value().node()));
        Finding transferFinding = null;
        if (!reply.ok()) {
            stitch.add(transferFailure(reply));
            transferFinding = peerFinding(peer.target(), reply);
            stitch.gap("not run: the handle did not reach the importer");
            stitch.add(registry.release(id));
            return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, transferFinding, start, debug);
        }
        List<StageResult> remote = reply.value().stages();
        stitch.add(TransferStage.of(StageStatus.OK, Math.max(0, reply.nanos() - nanos(remote)),
                "handle sent to " + peer.node() + " (" + reply.httpStatus() + ")"));
        // Only the importer's own stages count from its answer; create, export and transfer are ours.
        stitch.addAllExcept(remote, Stage.CREATE, Stage.EXPORT, Stage.TRANSFER, Stage.WRITEBACK, Stage.RELEASE);
        StageResult remoteWrite = find(remote, Stage.WRITEBACK);
        StageResult check = remoteWrite != null && remoteWrite.ok() ? registry.verify(id, writebackSeed) : null;
        stitch.add(StageStitch.mergeWriteback(remoteWrite, check));
        stitch.add(StageStitch.mergeRelease(find(remote, Stage.RELEASE), registry.release(id)));
        return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, null, start, debug);
    }

    // ---- pull: the target exports, we import --------------------------------------------------------------

    private PairResult pull(Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs, Request request,
                            Confirmation confirmation) {
        long start = System.nanoTime();
        Debug debug = new Debug(request.debug());
        long size = request.sizeBytes() != null ? request.sizeBytes() : granularity(mine.index());
        long seed = Seeds.next();
        Long writebackSeed = request.writeback() ? Seeds.next() : null;
        StageStitch stitch = new StageStitch();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("gpu", theirs.uuid());
        body.put("sizeBytes", size);
        body.put("handleType", "FABRIC");
        body.put("seed", Long.toString(seed));
        PeerCall<ExportReply> reply = checked(client.postExport(peer.target(), body), r -> {
            String missing = incomplete(r.stages(), Stage.CREATE, Stage.EXPORT);
            if (missing != null) {
                return missing;
            }
            boolean exported = r.verdict() == Verdict.PASS && r.handle() != null;
            // A refusal must say which stage failed, a success must carry the handle: else nothing can be judged.
            return exported || StageEngine.firstFailure(r.stages()) != null ? null
                    : "the exporter's answer has neither a handle nor a failed stage";
        });
        debug.say("POST /v1/exports on " + peer.target() + ": " + describe(reply));
        boolean named = reply.ok() && reply.value().exporter() != null;
        confirmation.check(named, named && peer.node().equals(reply.value().exporter().node()));
        if (!reply.ok()) {
            stitch.add(transferFailure(reply));
            stitch.gap("not run: the exporter could not be asked");
            return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch,
                    peerFinding(peer.target(), reply), start, debug);
        }
        ExportReply export = reply.value();
        stitch.addAllExcept(export.stages(), Stage.TRANSFER, Stage.IMPORT, Stage.RESERVE, Stage.MAP, Stage.ACCESS,
                Stage.VERIFY, Stage.WRITEBACK, Stage.RELEASE);
        if (export.verdict() != Verdict.PASS || export.handle() == null) {
            stitch.gap("not run: the exporter failed");
            stitch.add(find(export.stages(), Stage.RELEASE));
            return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch, null, start, debug);
        }
        FabricHandle handle;
        try {
            handle = FabricHandle.fromBase64(export.handle());
        } catch (IllegalArgumentException e) {
            stitch.add(TransferStage.of(StageStatus.FAILED, reply.nanos(), "the exporter sent an unusable handle: "
                    + e.getMessage()));
            stitch.gap("not run: no usable handle");
            stitch.add(remoteRelease(peer, export.id()));
            return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch,
                    FindingCode.PEER_ERROR.finding(Map.of("peer", peer.target(), "stage", Stage.TRANSFER.label(),
                            "detail", "the exporter sent an unusable handle: " + e.getMessage())), start, debug);
        }
        stitch.add(TransferStage.of(StageStatus.OK, Math.max(0, reply.nanos() - nanos(export.stages())),
                "handle received from " + peer.node() + " (" + reply.httpStatus() + ")"));
        List<StageResult> local = importer.importFabric(handle, size, mine.index(), seed, writebackSeed);
        stitch.addAllExcept(local, Stage.WRITEBACK, Stage.RELEASE);
        StageResult write = find(local, Stage.WRITEBACK);
        StageResult check = null;
        if (write != null && write.ok()) {
            PeerCall<StageReply> v = client.verifyExport(peer.target(), export.id(), writebackSeed);
            debug.say("POST /v1/exports/" + export.id() + "/verify: " + describe(v));
            check = v.ok() && v.value().stage() != null ? v.value().stage()
                    : new StageResult(Stage.WRITEBACK, StageStatus.FAILED, null, null, v.nanos() / 1e9,
                    "the exporter could not be asked to check the write-back: " + v.detail());
        }
        stitch.add(StageStitch.mergeWriteback(write, check));
        stitch.add(StageStitch.mergeRelease(find(local, Stage.RELEASE), remoteRelease(peer, export.id())));
        return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch, null, start, debug);
    }

    private StageResult remoteRelease(Peer peer, String id) {
        PeerCall<StageReply> d = client.deleteExport(peer.target(), id);
        if (d.ok() && d.value().stage() != null) {
            return d.value().stage();
        }
        // Not fatal: the exporter releases it when its TTL runs out.
        return new StageResult(Stage.RELEASE, StageStatus.FAILED, null, null, d.nanos() / 1e9,
                "could not ask the exporter to release (" + d.detail() + "); it expires by its TTL");
    }

    // ---- stitching ----------------------------------------------------------------------------------------

    /**
     * Collects both sides' stages by name and lists them in {@link Stage} order; a stage nobody ran appears as
     * skipped with the reason given for the gap.
     */

    private PairResult finish(Direction direction, String sourceNode, GpuSelector.Gpu source, String targetNode,
                              GpuSelector.Gpu target, StageStitch stitch, Finding peerFinding, long start, Debug debug) {
        List<StageResult> stages = stitch.list();
        boolean pass = peerFinding == null && StageEngine.passed(stages);
        Finding finding = peerFinding != null ? peerFinding
                : ProbeDiagnosis.diagnose(stages, sourceNode.equals(targetNode), sourceNode, targetNode);
        for (StageResult r : stages) {
            debug.say(r.name().label() + " (" + r.name().purpose() + "): " + r.status().label()
                    + (r.cuResultName() != null ? " " + r.cuResultName() : "") + ", " + r.detail());
        }
        return new PairResult(direction, sourceNode, source.uuid(), targetNode, target.uuid(), Verdict.of(pass),
                seconds(start), finding, stages, debug.lines());
    }

    // ---- peers --------------------------------------------------------------------------------------------

    private PairResult unreachable(String target, PeerCall<?> call) {
        StageStitch stitch = new StageStitch();
        stitch.add(transferFailure(call));
        stitch.gap("not run: the target could not be asked who it is");
        return new PairResult(Direction.PUSH, self.node(), null, null, null, Verdict.FAIL, call.nanos() / 1e9,
                peerFinding(target, call), stitch.list(), null);
    }

    /** The stages an importer reports, all of them on every path (skipped ones say why). */
    private static final Stage[] IMPORTER_STAGES = Importer.REPORTED.toArray(Stage[]::new);

    /**
     * A peer's answer that parsed but cannot be judged (stages missing, unnamed or without a status) becomes a
     * garbled call: a peer that leaves out its verify must not make a probe pass.
     */
    static <T> PeerCall<T> checked(PeerCall<T> call, java.util.function.Function<T, String> problem) {
        if (!call.ok()) {
            return call;
        }
        String why = problem.apply(call.value());
        return why == null ? call : PeerCall.failed(PeerCall.Kind.GARBLED, call.httpStatus(), why, call.nanos());
    }

    /** Why these stages cannot be trusted, or null when every stage has a name and a status and none is missing. */
    static String incomplete(List<StageResult> stages, Stage... required) {
        if (stages == null) {
            return "the peer's answer has no stages";
        }
        if (stages.stream().anyMatch(s -> s == null || s.name() == null || s.status() == null)) {
            return "the peer's answer has a stage without name or status";
        }
        List<String> missing = java.util.Arrays.stream(required)
                .filter(r -> stages.stream().noneMatch(s -> s.name() == r)).map(Stage::label).toList();
        return missing.isEmpty() ? null : "the peer's answer lacks stages: " + String.join(", ", missing);
    }

    static StageResult transferFailure(PeerCall<?> call) {
        StageStatus status = call.kind() == PeerCall.Kind.TIMEOUT ? StageStatus.TIMEOUT : StageStatus.FAILED;
        String detail = call.ok() ? "the peer's answer has no stages" : call.detail();
        return TransferStage.of(status, call.nanos(), detail);
    }

    static Finding peerFinding(String target, PeerCall<?> call) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("peer", target);
        evidence.put("stage", Stage.TRANSFER.label());
        evidence.put("detail", call.ok() ? "the peer's answer has no stages" : call.detail());
        if (call.httpStatus() > 0) {
            evidence.put("httpStatus", call.httpStatus());
        }
        FindingCode code = switch (call.kind()) {
            case UNREACHABLE -> FindingCode.PEER_UNREACHABLE;
            case TIMEOUT -> FindingCode.TIMEOUT;
            case REJECTED -> FindingCode.PEER_REJECTED;
            case GARBLED, OK -> FindingCode.PEER_ERROR;
        };
        return code.finding(evidence);
    }

    static Peer parsePeer(String target, JsonNode node) {
        JsonNode agent = node.get("agent");
        JsonNode gpus = node.get("gpus");
        if (agent == null || !agent.hasNonNull("node") || gpus == null || !gpus.isArray()) {
            return null;
        }
        List<GpuSelector.Gpu> list = new ArrayList<>();
        for (JsonNode g : gpus) {
            if (g.hasNonNull("uuid") && g.has("index")) {
                list.add(new GpuSelector.Gpu(g.get("index").asInt(), g.get("uuid").asString()));
            }
        }
        return new Peer(target, agent.get("node").asString(), agent.hasNonNull("id") ? agent.get("id").asString() : null,
                List.copyOf(list));
    }

    private List<GpuSelector.Gpu> localGpus() {
        return self.gpus().stream().map(g -> new GpuSelector.Gpu(g.index(), g.uuid())).toList();
    }

    private long granularity(int ordinal) {
        for (GpuDevice g : self.gpus()) {
            if (g.index() == ordinal && g.granularityBytes() > 0) {
                return g.granularityBytes();
            }
        }
        return 2L << 20; // the H200's granularity; the exporter refuses a size it cannot use
    }

    private static StageResult find(List<StageResult> stages, Stage stage) {
        return stages.stream().filter(r -> r.name() == stage).findFirst().orElse(null);
    }

    private static long nanos(List<StageResult> stages) {
        return (long) (stages.stream().mapToDouble(StageResult::durationSeconds).sum() * 1e9);
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private static String describe(PeerCall<?> c) {
        return c.ok() ? "HTTP " + c.httpStatus() + " in " + c.nanos() / 1_000_000.0 + " ms"
                : c.kind().name().toLowerCase() + ": " + c.detail();
    }

    /** The explanation kept with debug=true. */
    private static final class Debug {
        private final List<String> lines;

        Debug(boolean on) {
            this.lines = on ? new ArrayList<>() : null;
        }

        void say(String line) {
            if (lines != null) {
                lines.add(line);
            }
        }

        List<String> lines() {
            return lines == null ? null : List.copyOf(lines);
        }
    }
}
