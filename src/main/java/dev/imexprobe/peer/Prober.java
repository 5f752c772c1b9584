package dev.imexprobe.peer;

import dev.imexprobe.api.Wire;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.ContextGuard;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDeadline;
import dev.imexprobe.probe.ProbeReport;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.TransferStage;
import dev.imexprobe.probe.Verdict;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A real export → import between this agent and another, stage by stage, in either direction: push (this
 * agent exports, the target imports) or pull (the target exports, this agent imports). Both halves report
 * their own stages, stitched into one sequence in the order of {@link Stage}, with the transfer measured as the
 * round trip minus the peer's own work, and the finding named.
 *
 * <p>This class answers which pairs to probe and what the probe found as a whole; each part is its own class:
 * who the target is and how long that is believed ({@link PeerIdentities}, {@link Confirmation}), one exchange
 * each way ({@link PushExchange}, {@link PullExchange}), and what a peer's answer is worth ({@link PeerAnswers}).
 */
public final class Prober {

    private final LocalAgent self;
    private final PeerIdentities identities;
    private final PushExchange push;
    private final PullExchange pull;

    public Prober(LocalAgent self, ExportRegistry registry, Importer importer, PeerClient client) {
        this.self = self;
        this.identities = new PeerIdentities(client);
        this.push = new PushExchange(self, registry, client);
        this.pull = new PullExchange(self, importer, client);
    }

    /** What to probe. Null selectors mean every GPU; null size means the exporter GPU's granularity. */
    public record Request(String target, Set<Direction> directions, String gpu, String peerGpu, Long sizeBytes,
                          boolean writeback, boolean debug) {
    }

    /**
     * Who the target is, from its /v1/node. {@code channelMode} is its imexprobe.channel.mode (null from an agent
     * that does not say): the mesh probes no pair into an observer.
     */
    public record Peer(String target, String node, String agentId, List<GpuSelector.Gpu> gpus, String channelMode) {

        public Peer(String target, String node, String agentId, List<GpuSelector.Gpu> gpus) {
            this(target, node, agentId, gpus, null);
        }

        public boolean observer() {
            return "observer".equals(channelMode);
        }
    }

    /** Who a peer is, or why it could not say. */
    public record Identification(Peer peer, PeerCall<?> failure) {
        public boolean ok() {
            return peer != null;
        }
    }

    /**
     * Probes every selected pair in every requested direction. Throws IllegalArgumentException for a GPU
     * selector that matches nothing (the caller's mistake); everything else is a result.
     *
     * <p>The target's identity (GET /v1/node) is asked once and then trusted for {@link PeerIdentities#TTL} while
     * probes with it get through: every answer names the agent that gave it, so a target that stopped answering,
     * or answers as someone else, is asked again at once, and the probe ends as an uncached one would have.
     */
    public ProbeReport probe(Request request) {
        long start = System.nanoTime();
        PeerIdentities.Known known = identities.trusted(request.target());
        if (known != null) {
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
            identities.forget(request.target(), known);
            Identification fresh = identify(request.target());
            if (!fresh.ok()) {
                if (cached != null && !confirmation.mismatched()) {
                    // The target stopped answering during the probe (no one else answered in its name): what
                    // the probe found, releases included, is what an uncached probe would have reported.
                    return cached;
                }
                return unreachableReport(request.target(), fresh.failure(), start);
            }
            if (cached != null && fresh.peer().equals(known.peer())) {
                return cached; // the same agent as before: what the probe found stands
            }
            return probeAndRemember(request, fresh.peer(), start);
        }
        Identification first = identify(request.target());
        if (!first.ok()) {
            return unreachableReport(request.target(), first.failure(), start);
        }
        return probeAndRemember(request, first.peer(), start);
    }

    private ProbeReport unreachableReport(String target, PeerCall<?> failure, long start) {
        return new ProbeReport(target, null, Verdict.FAIL, Exchange.seconds(start),
                List.of(unreachable(target, failure)));
    }

    private ProbeReport probeAndRemember(Request request, Peer peer, long start) {
        long asked = System.nanoTime();
        Confirmation confirmation = new Confirmation();
        ProbeReport report = probeAll(request, peer, start, confirmation);
        if (confirmation.held()) {
            identities.remember(request.target(), peer, asked);
        }
        return report;
    }

    private ProbeReport probeAll(Request request, Peer peer, long start, Confirmation confirmation) {
        if (self.agentId().equals(peer.agentId())) {
            throw new IllegalArgumentException(intoItself(request.target()));
        }
        List<GpuSelector.Gpu> mine = GpuSelector.select(request.gpu(), localGpus(), "this agent (" + self.node() + ")");
        List<GpuSelector.Gpu> theirs = GpuSelector.select(request.peerGpu(), peer.gpus(), "the target (" + peer.node() + ")");
        List<PairResult> results = new ArrayList<>();
        for (GpuSelector.Gpu m : mine) {
            for (GpuSelector.Gpu t : theirs) {
                Finding noContext = noContext(m, t);
                if (noContext != null) {
                    // compute mode or MIG: no context on that GPU, so nothing runs; the answer says why
                    for (Direction d : List.of(Direction.PUSH, Direction.PULL)) {
                        if (request.directions().contains(d)) {
                            results.add(notProbed(d, peer, m, t, noContext));
                        }
                    }
                    continue;
                }
                if (request.directions().contains(Direction.PUSH)) {
                    results.add(ProbeDeadline.past() ? notStarted(Direction.PUSH, peer, m, t)
                            : push.run(peer, m, t, request, confirmation));
                }
                if (request.directions().contains(Direction.PULL)) {
                    results.add(ProbeDeadline.past() ? notStarted(Direction.PULL, peer, m, t)
                            : pull.run(peer, m, t, request, confirmation));
                }
            }
        }
        // Loops, not streams, here and below: per probe, and streams cost under the agents' C1 (docs/performance.md).
        int probed = 0;
        boolean pass = true;
        for (PairResult r : results) {
            if (r.verdict() != Verdict.NOT_PROBED) {
                probed++;
                pass &= r.passed();
            }
        }
        Verdict verdict = probed == 0 && !results.isEmpty() ? Verdict.NOT_PROBED : Verdict.of(probed > 0 && pass);
        return new ProbeReport(request.target(), peer.node(), verdict, Exchange.seconds(start), List.copyOf(results));
    }

    /**
     * Why a target that is this agent is the caller's mistake: the import would run in the process that exported,
     * which passes where another process's import of the same handle fails (the seed's containers), so its pass
     * would say nothing about any pair. The mesh leaves itself out for the same reason.
     */
    private String intoItself(String target) {
        return "target " + Wire.truncate(target) + " is this agent itself (" + self.node() + ", agent "
                + self.agentId() + "): a probe must import in another process, since an import into the exporting "
                + "process passes even where other processes' imports fail; name another agent, or run "
                + "'imexprobe check' for this node's own self-probe";
    }

    /** A pair the probe's deadline left no time for: reported as a timeout, never started. */
    public PairResult notStarted(Direction direction, Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs) {
        String why = "not started: " + ProbeDeadline.PASSED;
        StageStitch stitch = new StageStitch();
        stitch.add(TransferStage.of(StageStatus.TIMEOUT, 0, why));
        stitch.gap(why);
        boolean pushing = direction == Direction.PUSH;
        return new PairResult(direction, pushing ? self.node() : peer.node(), pushing ? mine.uuid() : theirs.uuid(),
                pushing ? peer.node() : self.node(), pushing ? theirs.uuid() : mine.uuid(), Verdict.FAIL, 0,
                FindingCode.TIMEOUT.finding(Map.of("peer", peer.target(), "stage", Stage.TRANSFER.label(),
                        "detail", why)), stitch.list(), null);
    }

    /**
     * Probes one pair one way (the mesh's and the preflight's unit of work). A pair with a GPU that takes no context
     * is not probed: nothing is asked of the peer.
     */
    public PairResult probePair(Peer peer, GpuSelector.Gpu local, GpuSelector.Gpu remote, Direction direction,
                                Long sizeBytes, boolean writeback) {
        Finding why = noContext(local, remote);
        if (why != null) {
            return notProbed(direction, peer, local, remote, why);
        }
        Request r = new Request(peer.target(), EnumSet.of(direction), null, null, sizeBytes, writeback, false);
        Confirmation unused = new Confirmation();
        return (direction == Direction.PUSH ? push : pull).run(peer, local, remote, r, unused);
    }

    /** The pair of {@code mine} and {@code theirs} one way, not probed for {@code why}: the exporter is the source. */
    private PairResult notProbed(Direction direction, Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs,
                                 Finding why) {
        boolean pushing = direction == Direction.PUSH;
        // noContext names this agent's GPU's reason first: this agent exports in a push, the peer in a pull
        boolean mineRefused = mine.notProbed() != null;
        return Exchange.notProbed(direction, pushing ? self.node() : peer.node(), pushing ? mine : theirs,
                pushing ? peer.node() : self.node(), pushing ? theirs : mine, List.of(), why,
                mineRefused == pushing ? Blame.SOURCE : Blame.TARGET, System.nanoTime());
    }

    /**
     * Why no context may be made for a pair of this agent's GPU and the peer's (compute mode, MIG, no fabric memory:
     * each agent's /v1/node names its own), the local GPU's reason first; null when both may be probed.
     */
    public static Finding noContext(GpuSelector.Gpu local, GpuSelector.Gpu remote) {
        return local.notProbed() != null ? ContextGuard.of(local) : ContextGuard.of(remote);
    }

    /** Asks a peer who it is (GET /v1/node). */
    public Identification identify(String target) {
        return identities.identify(target);
    }

    /**
     * The result for a pair whose target did not answer: every stage but the transfer skipped, the finding
     * naming the peer. Target node and GPU are the peer's when it was known before, else its address.
     */
    public PairResult unreachablePair(String target, Peer known, GpuSelector.Gpu local, GpuSelector.Gpu remote,
                                      PeerCall<?> call) {
        StageStitch stitch = new StageStitch();
        stitch.add(PeerAnswers.transferFailure(call));
        stitch.gap("not run: the target could not be asked who it is");
        return new PairResult(Direction.PUSH, self.node(), local.uuid(), known != null ? known.node() : target,
                remote != null ? remote.uuid() : null, Verdict.FAIL, call.nanos() / 1e9,
                PeerAnswers.peerFinding(target, call), stitch.list(), null);
    }

    /** The peer did not answer the exchange at all (no connection, or no answer within the timeout). */
    public static boolean unanswered(PairResult r) {
        StageResult transfer = Exchange.find(r.stages(), Stage.TRANSFER);
        return transfer != null && !transfer.ok() && r.finding() != null
                && (r.finding().is(FindingCode.PEER_UNREACHABLE) || r.finding().is(FindingCode.TIMEOUT));
    }

    /**
     * A pair of the same peer not tried after {@code unanswered}, an exchange the peer did not answer at all
     * ({@link #unanswered}): the mesh and the preflight record it as that failure instead of waiting the timeout
     * again for each pair, so a peer that stopped answering costs one timeout, not one per pair. {@code mine} and
     * {@code theirs} are this agent's GPU and the peer's; the direction is the unanswered exchange's.
     */
    public static PairResult notTried(PairResult unanswered, GpuSelector.Gpu mine, GpuSelector.Gpu theirs) {
        StageResult transfer = Exchange.find(unanswered.stages(), Stage.TRANSFER);
        String why = "not tried: the target did not answer the exchange of " + unanswered.sourceGpu()
                + " and " + unanswered.targetGpu() + (transfer != null && transfer.detail() != null
                        ? " (" + transfer.detail() + ")" : "");
        StageStitch stitch = new StageStitch();
        stitch.add(TransferStage.of(transfer != null ? transfer.status() : StageStatus.FAILED, 0, why));
        stitch.gap(why);
        Finding was = unanswered.finding();
        Map<String, Object> evidence = new java.util.LinkedHashMap<>(was.evidence());
        evidence.put("detail", why);
        Finding finding = was.catalogueEntry().finding(evidence);
        if (finding.blame() != was.blame()) {
            finding = finding.withBlame(was.blame(), null);
        }
        boolean pushing = unanswered.direction() == Direction.PUSH;
        return new PairResult(unanswered.direction(), unanswered.sourceNode(), pushing ? mine.uuid() : theirs.uuid(),
                unanswered.targetNode(), pushing ? theirs.uuid() : mine.uuid(), Verdict.FAIL, 0, finding,
                stitch.list(), null);
    }

    private PairResult unreachable(String target, PeerCall<?> call) {
        StageStitch stitch = new StageStitch();
        stitch.add(PeerAnswers.transferFailure(call));
        stitch.gap("not run: the target could not be asked who it is");
        return new PairResult(Direction.PUSH, self.node(), null, null, null, Verdict.FAIL, call.nanos() / 1e9,
                PeerAnswers.peerFinding(target, call), stitch.list(), null);
    }

    private List<GpuSelector.Gpu> localGpus() {
        List<GpuDevice> gpus = self.gpus();
        List<GpuSelector.Gpu> local = new ArrayList<>(gpus.size());
        for (GpuDevice g : gpus) {
            local.add(new GpuSelector.Gpu(g.index(), g.uuid(), g.imexDomain(), g.notProbed()));
        }
        return Collections.unmodifiableList(local);
    }
}
