package dev.imexprobe.peer;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.peer.Prober.Peer;
import dev.imexprobe.peer.Prober.Request;
import dev.imexprobe.probe.ContextGuard;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.ImexDomain;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.Verdict;

import java.util.ArrayList;
import java.util.List;

/**
 * One exchange with a peer in one direction ({@link PushExchange}, {@link PullExchange}): both halves report
 * their own stages, stitched here into one sequence in the order of {@link Stage} and judged.
 */
abstract sealed class Exchange permits PushExchange, PullExchange {

    final LocalAgent self;
    final PeerClient client;

    Exchange(LocalAgent self, PeerClient client) {
        this.self = self;
        this.client = client;
    }

    /** Probes one pair this way; {@code confirmation} learns whether the answers came from the expected agent. */
    abstract PairResult run(Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs, Request request,
                            Confirmation confirmation);

    /** The size when the request names none: the granularity of this agent's GPU in the pair. */
    long sizeFor(Request request, int ordinal) {
        if (request.sizeBytes() != null) {
            return request.sizeBytes();
        }
        for (GpuDevice g : self.gpus()) {
            if (g.index() == ordinal && g.granularityBytes() > 0) {
                return g.granularityBytes();
            }
        }
        return 2L << 20; // the H200's granularity; the exporter refuses a size it cannot use
    }

    /**
     * The pair's result: its stages in order, the peer's finding if the peer failed, else the diagnosis. The
     * source is the exporter and the target the importer, whichever way the exchange ran.
     *
     * @param exporterGpuSeen whether the importer sees the exporter's GPU (null when not known)
     */
    static PairResult finish(Direction direction, String sourceNode, GpuSelector.Gpu source, String targetNode,
                             GpuSelector.Gpu target, StageStitch stitch, Boolean exporterGpuSeen, Finding peerFinding,
                             long start, Debug debug) {
        List<StageResult> stages = stitch.list();
        boolean pass = peerFinding == null && StageEngine.passed(stages);
        Finding finding = peerFinding != null ? peerFinding : ProbeDiagnosis.diagnose(stages,
                sourceNode.equals(targetNode), source.uuid(), exporterGpuSeen, sourceNode, targetNode);
        if (!pass && peerFinding == null && !ImexDomain.same(source.domain(), target.domain())
                && reachedTheExport(stages)) {
            finding = acrossDomains(source.domain(), target.domain(), finding);
        }
        for (int i = 0; debug.on() && i < stages.size(); i++) {
            StageResult r = stages.get(i);
            debug.say(r.name().label() + " (" + r.name().purpose() + "): " + r.status().label()
                    + (r.cuResultName() != null ? " " + r.cuResultName() : "") + ", " + r.detail());
        }
        return new PairResult(direction, sourceNode, source.uuid(), targetNode, target.uuid(),
                ProbeDiagnosis.verdict(pass, finding), seconds(start), finding, stages, debug.lines());
    }

    /**
     * Whether this agent's process has the GPU with {@code uuid}, visible to CUDA or not (the importer's view, in a
     * pull); null when that cannot be told.
     */
    Boolean sees(String uuid) {
        return self.reaches(uuid);
    }

    /**
     * A pair on which nothing ran: a GPU of it takes no context (compute mode, MIG, no fabric memory). Never a
     * failure; the finding blames the refusing side ({@link ContextGuard#inPair}): the exporter's (source) or the
     * importer's (target).
     */
    static PairResult notProbed(Direction direction, String sourceNode, GpuSelector.Gpu source, String targetNode,
                                GpuSelector.Gpu target, List<StageResult> stages, Finding why, Blame refusingSide,
                                long start) {
        return new PairResult(direction, sourceNode, source.uuid(), targetNode, target.uuid(), Verdict.NOT_PROBED,
                seconds(start), ContextGuard.inPair(why, refusingSide), stages, null);
    }

    /**
     * Whether the first failure came where the importer acts on the exporter's memory: only there does a failure
     * between two domains show that they are apart. A full GPU or a broken driver on the exporter fails the same way
     * in any pair, and is named as such, never as domains apart by design.
     */
    static boolean reachedTheExport(List<StageResult> stages) {
        StageResult failed = StageEngine.firstFailure(stages);
        return failed != null && failed.name().reachesTheExport();
    }

    /** A failure between GPUs of different IMEX domains is what they are: apart by design, not broken. */
    static Finding acrossDomains(String sourceDomain, String targetDomain, Finding failure) {
        java.util.Map<String, Object> evidence = new java.util.LinkedHashMap<>();
        evidence.put("sourceDomain", sourceDomain);
        evidence.put("targetDomain", targetDomain);
        if (failure != null) {
            for (String k : List.of("stage", "driverResult", "driverResultCode")) {
                if (failure.evidence() != null && failure.evidence().get(k) != null) {
                    evidence.put(k, failure.evidence().get(k));
                }
            }
            evidence.put("finding", failure.code());
        }
        return FindingCode.DIFFERENT_IMEX_DOMAIN.finding(evidence);
    }

    static StageResult find(List<StageResult> stages, Stage stage) {
        for (StageResult r : stages) { // loops, not streams, on every exchange (the agents run C1 only)
            if (r.name() == stage) {
                return r;
            }
        }
        return null;
    }

    static long nanos(List<StageResult> stages) {
        double sum = 0;
        for (StageResult r : stages) {
            sum += r.durationSeconds();
        }
        return (long) (sum * 1e9);
    }

    static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    static String describe(PeerCall<?> c) {
        return c.ok() ? "HTTP " + c.httpStatus() + " in " + c.nanos() / 1_000_000.0 + " ms"
                : c.kind().name().toLowerCase() + ": " + c.detail();
    }

    /** The explanation kept with debug=true. */
    static final class Debug {
        private final List<String> lines;

        Debug(boolean on) {
            this.lines = on ? new ArrayList<>() : null;
        }

        /** Whether lines are kept: callers build a line only then (not on every exchange). */
        boolean on() {
            return lines != null;
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
