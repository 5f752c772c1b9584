package dev.imexprobe.mesh;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.ImexDomain;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.StageResult;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The optional check that IMEX domains are apart: at most one pair across domains probed per
 * {@code imexprobe.mesh.cross-domain-sample-interval} (0, the default: never). A failure there is what should
 * happen (DIFFERENT_IMEX_DOMAIN, info, with the sample's stage and CUresult); a pass means the two domains are not
 * isolated (IMEX_DOMAINS_NOT_ISOLATED), or, for the same clique ID under two cluster UUIDs, one domain whose members
 * disagree about its name (DOMAIN_MEMBERS_DISAGREE). Either way the pair stays not_probed: no pair series, no alert.
 * The last sample's finding stays with its pair until the next sample of that pair.
 */
public final class CrossDomainSample {

    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private final Map<PairKey, Finding> last = new ConcurrentHashMap<>();
    /** Pairs across domains offered for a sample → when last sampled (MIN_VALUE: never), when last offered. */
    private final Map<PairKey, long[]> offered = new java.util.HashMap<>();
    /** A pair not offered for this long has left (its peer is gone): it no longer waits for a turn. */
    private final long forgetNanos;
    private volatile long nextAt;
    private volatile boolean started;

    public CrossDomainSample(Duration interval, Duration meshInterval, LongSupplier nanoTime) {
        if (interval == null || interval.isNegative()) {
            throw new IllegalArgumentException("imexprobe.mesh.cross-domain-sample-interval must be 0 (off) or "
                    + "positive, got " + interval);
        }
        this.intervalNanos = interval.toNanos();
        this.forgetNanos = 3 * Math.max(intervalNanos, meshInterval.toNanos());
        this.nanoTime = nanoTime;
    }

    public boolean enabled() {
        return intervalNanos > 0;
    }

    /**
     * Whether {@code key} is the pair to sample now: true at most once per interval (the first time at once), and
     * only for a pair sampled least recently of those offered so far, so that over the rounds every pair across
     * domains takes its turn.
     */
    public synchronized boolean take(PairKey key) {
        if (!enabled()) {
            return false;
        }
        long now = nanoTime.getAsLong();
        long[] mine = offered.computeIfAbsent(key, k -> new long[] {Long.MIN_VALUE, now});
        mine[1] = now;
        if (started && now - nextAt < 0) {
            return false;
        }
        offered.values().removeIf(o -> now - o[1] > forgetNanos);
        last.keySet().retainAll(offered.keySet());
        for (long[] other : offered.values()) {
            if (other[0] < mine[0]) {
                return false; // another pair waits longer: its turn
            }
        }
        started = true;
        nextAt = now + intervalNanos;
        mine[0] = now;
        return true;
    }

    /** The finding a pair across domains carries: its last sample's, else the plain DIFFERENT_IMEX_DOMAIN. */
    public Finding findingFor(PairKey key, String sourceDomain, String targetDomain) {
        Finding f = last.get(key);
        return f != null ? f : FindingCode.DIFFERENT_IMEX_DOMAIN.finding(Map.of("sourceDomain", sourceDomain,
                "targetDomain", targetDomain));
    }

    /**
     * Judges a sample's result and remembers it for the pair. A sample that failed before the importer acted on the
     * exporter's memory (a full or broken exporter GPU, an unreachable peer) or was not probed shows nothing about the
     * domains: the pair keeps what its last sample showed, and its next turn samples again.
     */
    public Finding record(PairKey key, String sourceDomain, String targetDomain, PairResult result) {
        StageResult first = result.firstFailure();
        if (!result.passed() && (first == null || !first.name().reachesTheExport())) {
            return findingFor(key, sourceDomain, targetDomain);
        }
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("sourceNode", key.sourceNode());
        e.put("sourceDomain", sourceDomain);
        e.put("targetNode", key.targetNode());
        e.put("targetDomain", targetDomain);
        e.put("sampledAt", Instant.now().toString());
        Finding f;
        if (result.passed()) {
            if (sameCliqueOtherCluster(sourceDomain, targetDomain)) {
                e.put("detail", key.sourceNode() + " and " + key.targetNode() + " report clique "
                        + ImexDomain.clique(sourceDomain) + " under two cluster UUIDs (" + sourceDomain + ", " + targetDomain
                        + "), yet a sampled import between them passed: they are one domain that reports two");
                f = FindingCode.DOMAIN_MEMBERS_DISAGREE.finding(e);
            } else {
                f = FindingCode.IMEX_DOMAINS_NOT_ISOLATED.finding(e);
            }
        } else {
            e.put("sample", first.name().label() + " " + (first.cuResultName() != null ? first.cuResultName()
                    : first.status().name()));
            f = FindingCode.DIFFERENT_IMEX_DOMAIN.finding(e);
        }
        last.put(key, f);
        return f;
    }

    static boolean sameCliqueOtherCluster(String a, String b) {
        return ImexDomain.isFabric(a) && ImexDomain.isFabric(b)
                && ImexDomain.clique(a).equals(ImexDomain.clique(b)) && !ImexDomain.cluster(a).equals(ImexDomain.cluster(b));
    }
}
