package dev.imexprobe.mesh;

import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.StageResult;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The latest result of every pair this agent took part in: mesh probes (it exported) and on-demand probes in
 * either direction. Thread-safe; readers get immutable snapshots.
 */
public final class MeshState {

    private final Clock clock;
    private final Map<PairKey, PairState> pairs = new ConcurrentSkipListMap<>();
    private final Map<PairKey, Instant> seen = new ConcurrentHashMap<>();
    /** Per pair: its last results as bits (1: failed, newest lowest) and how many there are (at most RECENT). */
    private final Map<PairKey, long[]> recent = new ConcurrentHashMap<>();
    /** GPU UUID → IMEX domain, as this agent's node report and its peers' /v1/node said last. */
    private final Map<String, String> domains = new ConcurrentHashMap<>();
    private volatile Instant lastCycle;
    private volatile Instant roundStart;
    private volatile Instant roundBefore;
    private volatile int peersKnown;

    public MeshState(Clock clock) {
        this.clock = clock;
    }

    /** A pair we intend to probe: unknown until its first result. */
    public void expect(PairKey key) {
        pairs.putIfAbsent(key, PairState.unknown(key));
        seen.put(key, clock.instant());
    }

    /** Marks a known pair as still part of the mesh (its peer is still discovered); an absent pair stays absent. */
    public void keep(PairKey key) {
        if (pairs.containsKey(key)) {
            seen.put(key, clock.instant());
        }
    }

    /** Drops one pair at once (one recorded under a peer's address before the peer said who it is). */
    public void forget(PairKey key) {
        pairs.remove(key);
        seen.remove(key);
        recent.remove(key);
    }

    /** What this agent learned of a GPU's IMEX domain (its own GPUs, a peer's /v1/node); null domains are ignored. */
    public void learnDomain(String gpuUuid, String domain) {
        if (gpuUuid != null && domain != null) {
            domains.put(gpuUuid, domain);
        }
    }

    /** The GPU's IMEX domain, or null when no one said. */
    public String domainOf(String gpuUuid) {
        return gpuUuid == null ? null : domains.get(gpuUuid);
    }

    /** The importer's domain when it is known and differs from the exporter's (a pair across domains), else null. */
    private String targetDomainIfApart(String source, String target) {
        String s = domainOf(source);
        String t = domainOf(target);
        return s != null && t != null && !s.equals(t) ? t : null;
    }

    public PairState record(PairResult r) {
        PairKey key = new PairKey(r.sourceNode(), orUnknown(r.sourceGpu()), r.targetNode() != null ? r.targetNode()
                : "unknown", orUnknown(r.targetGpu()));
        if (r.verdict() == dev.imexprobe.probe.Verdict.NOT_PROBED) {
            return notProbed(key, r.finding());
        }
        Instant now = clock.instant();
        seen.put(key, now);
        // The last RECENT results, one bit each (1: failed, newest lowest), and how many there are. Apart from the
        // pair's compute below, which a skip list may run more than once; ConcurrentHashMap.compute runs once.
        boolean passed = r.passed();
        long[] h = recent.compute(key, (k, was) -> was == null ? new long[] {passed ? 0 : 1, 1}
                : new long[] {was[0] << 1 | (passed ? 0 : 1), Math.min(PairState.RECENT, was[1] + 1)});
        return pairs.compute(key, (k, old) -> {
            StageResult failed = r.firstFailure();
            boolean ok = r.passed();
            Instant lastSuccess = ok ? now : old != null ? old.lastSuccess() : null;
            int failures = ok ? 0 : (old != null ? old.consecutiveFailures() : 0) + 1;
            return new PairState(k.sourceNode(), k.sourceGpu(), k.targetNode(), k.targetGpu(),
                    domainOf(k.sourceGpu()), targetDomainIfApart(k.sourceGpu(), k.targetGpu()),
                    ok ? PairState.State.OK : PairState.State.FAILED,
                    ok || failed == null ? null : failed.name().label(),
                    ok || failed == null ? null : failed.cuResult(),
                    ok || failed == null ? null : failed.cuResultName(),
                    r.finding(), 0.0, lastSuccess, now, r.durationSeconds(), failures, (int) h[1],
                    Long.bitCount(h[0]));
        });
    }

    /** A pair the mesh does not probe by design; {@code why} is the finding that says so. */
    public PairState notProbed(PairKey k, dev.imexprobe.finding.Finding why) {
        Instant now = clock.instant();
        seen.put(k, now);
        recent.remove(k);
        PairState s = new PairState(k.sourceNode(), k.sourceGpu(), k.targetNode(), k.targetGpu(),
                domainOf(k.sourceGpu()), targetDomainIfApart(k.sourceGpu(), k.targetGpu()), PairState.State.NOT_PROBED, null, null, null, why, 0.0, null, now, null, 0);
        pairs.put(k, s);
        return s;
    }

    /** Every pair as of now; a pair recorded before its GPUs' domains were learned gets them here. */
    public List<PairState> snapshot() {
        Instant now = clock.instant();
        return pairs.values().stream().map(p -> withDomains(p).at(now)).toList();
    }

    private PairState withDomains(PairState p) {
        if (p.domain() != null) {
            return p;
        }
        String d = domainOf(p.sourceGpu());
        if (d == null) {
            return p;
        }
        return new PairState(p.sourceNode(), p.sourceGpu(), p.targetNode(), p.targetGpu(), d,
                targetDomainIfApart(p.sourceGpu(), p.targetGpu()), p.state(), p.stage(), p.cuResult(), p.cuResultName(),
                p.finding(), p.ageSeconds(), p.lastSuccess(), p.lastProbe(), p.durationSeconds(),
                p.consecutiveFailures(), p.recentProbes(), p.recentFailures());
    }

    /** A mesh round begins; see {@link #forgetUnseenForTwoRounds()}. */
    public void roundStarted() {
        roundBefore = roundStart;
        roundStart = clock.instant();
    }

    /**
     * At a round's end, forgets the pairs neither probed nor kept (their peer still discovered) since the round before
     * it began: the peer left discovery (not Ready, deleted, off the list), or an on-demand pair no round probes.
     * Their last result measures nothing any more: kept for minutes, a departed peer's failed pairs fired pair alerts
     * and turned the node condition False (between the rounds of a long interval the scheduler forgets a departed peer
     * that did not answer sooner).
     * Two rounds, so a pair probed on demand just before a round is shown for one round at least. Returns them.
     */
    public Set<PairKey> forgetUnseenForTwoRounds() {
        Instant since = roundBefore;
        return since == null ? Set.of() : forgetSeenBefore(since);
    }

    /** Forgets pairs not expected nor probed for {@code age}. Returns them. */
    public Set<PairKey> forgetOlderThan(Duration age) {
        return forgetSeenBefore(clock.instant().minus(age));
    }

    private Set<PairKey> forgetSeenBefore(Instant limit) {
        Set<PairKey> gone = new java.util.HashSet<>();
        seen.forEach((k, t) -> {
            if (t.isBefore(limit)) {
                gone.add(k);
            }
        });
        gone.forEach(this::forget);
        return gone;
    }

    public void cycleFinished() {
        lastCycle = clock.instant();
    }

    /** How many peers discovery gave the last round (kept here so a scrape never runs discovery). */
    public void peersKnown(int n) {
        peersKnown = n;
    }

    public int peersKnown() {
        return peersKnown;
    }

    public Instant lastCycle() {
        return lastCycle;
    }

    private static String orUnknown(String gpu) {
        return gpu == null ? PairKey.UNKNOWN_GPU : gpu;
    }
}
