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
    private volatile Instant lastCycle;
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
    }

    public PairState record(PairResult r) {
        PairKey key = new PairKey(r.sourceNode(), orUnknown(r.sourceGpu()), r.targetNode() != null ? r.targetNode()
                : "unknown", orUnknown(r.targetGpu()));
        if (r.verdict() == dev.imexprobe.probe.Verdict.NOT_PROBED) {
            return notProbed(key, r.finding());
        }
        Instant now = clock.instant();
        seen.put(key, now);
        return pairs.compute(key, (k, old) -> {
            StageResult failed = r.firstFailure();
            boolean ok = r.passed();
            Instant lastSuccess = ok ? now : old != null ? old.lastSuccess() : null;
            int failures = ok ? 0 : (old != null ? old.consecutiveFailures() : 0) + 1;
            return new PairState(k.sourceNode(), k.sourceGpu(), k.targetNode(), k.targetGpu(),
                    ok ? PairState.State.OK : PairState.State.FAILED,
                    ok || failed == null ? null : failed.name().label(),
                    ok || failed == null ? null : failed.cuResult(),
                    ok || failed == null ? null : failed.cuResultName(),
                    r.finding(), 0.0, lastSuccess, now, r.durationSeconds(), failures);
        });
    }

    /** A pair the mesh does not probe by design; {@code why} is the finding that says so. */
    public PairState notProbed(PairKey k, dev.imexprobe.finding.Finding why) {
        Instant now = clock.instant();
        seen.put(k, now);
        PairState s = new PairState(k.sourceNode(), k.sourceGpu(), k.targetNode(), k.targetGpu(),
                PairState.State.NOT_PROBED, null, null, null, why, 0.0, null, now, null, 0);
        pairs.put(k, s);
        return s;
    }

    public List<PairState> snapshot() {
        Instant now = clock.instant();
        return pairs.values().stream().map(p -> p.at(now)).toList();
    }

    /** Forgets pairs not expected nor probed for {@code age}: peers that left the domain. Returns them. */
    public Set<PairKey> forgetOlderThan(Duration age) {
        Instant limit = clock.instant().minus(age);
        Set<PairKey> gone = new java.util.HashSet<>();
        seen.forEach((k, t) -> {
            if (t.isBefore(limit)) {
                gone.add(k);
            }
        });
        gone.forEach(k -> {
            pairs.remove(k);
            seen.remove(k);
        });
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
