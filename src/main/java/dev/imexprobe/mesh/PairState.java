package dev.imexprobe.mesh;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import java.time.Instant;

/**
 * What is known about one ordered pair: its state, and for a failure the first failing stage with its CUresult
 * and the finding. {@code cuResult}/{@code cuResultName} appear only when that stage called the driver.
 *
 * @param domain       the pair's IMEX domain ({@code ImexDomain}): the exporter GPU's, which for every pair the mesh
 *                     probes is the importer's too (null while the exporter's is not known)
 * @param targetDomain the importer GPU's domain, only when it differs from {@code domain}: a pair across domains
 * @param ageSeconds   seconds since the last result (null while unknown)
 * @param lastSuccess  when the pair last passed (null if never)
 * @param lastProbe    when the last result arrived (null while unknown)
 * @param recentProbes   how many of the pair's last {@value #RECENT} results are counted in {@code recentFailures}
 *                       (null while unknown or not probed)
 * @param recentFailures how many of them failed: a pair that fails now and then shows here, where the last result
 *                       alone may read ok (ImexprobePairImportIntermittent)
 */
@JsonPropertyOrder({"sourceNode", "sourceGpu", "targetNode", "targetGpu", "domain", "targetDomain", "state", "stage",
        "cuResult", "cuResultName", "finding", "ageSeconds", "lastSuccess"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PairState(String sourceNode, String sourceGpu, String targetNode, String targetGpu, String domain,
                        String targetDomain, State state, String stage, Integer cuResult, String cuResultName,
                        Finding finding, Double ageSeconds, Instant lastSuccess, Instant lastProbe,
                        Double durationSeconds, int consecutiveFailures, Integer recentProbes,
                        Integer recentFailures) {

    /** The results {@code recentProbes} and {@code recentFailures} look back over. */
    public static final int RECENT = 64;

    /** A pair without a recent history (unknown, not probed, or as a peer of an earlier version sends it). */
    public PairState(String sourceNode, String sourceGpu, String targetNode, String targetGpu, String domain,
                     String targetDomain, State state, String stage, Integer cuResult, String cuResultName,
                     Finding finding, Double ageSeconds, Instant lastSuccess, Instant lastProbe,
                     Double durationSeconds, int consecutiveFailures) {
        this(sourceNode, sourceGpu, targetNode, targetGpu, domain, targetDomain, state, stage, cuResult, cuResultName,
                finding, ageSeconds, lastSuccess, lastProbe, durationSeconds, consecutiveFailures, null, null);
    }

    /** A pair whose domains are not known (yet). */
    public PairState(String sourceNode, String sourceGpu, String targetNode, String targetGpu, State state,
                     String stage, Integer cuResult, String cuResultName, Finding finding, Double ageSeconds,
                     Instant lastSuccess, Instant lastProbe, Double durationSeconds, int consecutiveFailures) {
        this(sourceNode, sourceGpu, targetNode, targetGpu, null, null, state, stage, cuResult, cuResultName, finding,
                ageSeconds, lastSuccess, lastProbe, durationSeconds, consecutiveFailures, null, null);
    }

    public enum State {
        /** NOT_PROBED: by design (another IMEX domain, ...); its finding says why. Never a failure. */
        OK, FAILED, UNKNOWN, NOT_PROBED;

        @com.fasterxml.jackson.annotation.JsonValue
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public PairKey key() {
        return new PairKey(sourceNode, sourceGpu, targetNode, targetGpu);
    }

    public static PairState unknown(PairKey k) {
        return new PairState(k.sourceNode(), k.sourceGpu(), k.targetNode(), k.targetGpu(), State.UNKNOWN, null, null,
                null, null, null, null, null, null, 0);
    }

    /** The same state seen at {@code now}: only the age moves. */
    public PairState at(Instant now) {
        Double age = lastProbe == null ? null : Math.max(0, (now.toEpochMilli() - lastProbe.toEpochMilli()) / 1000.0);
        return new PairState(sourceNode, sourceGpu, targetNode, targetGpu, domain, targetDomain, state, stage, cuResult,
                cuResultName, finding, age, lastSuccess, lastProbe, durationSeconds, consecutiveFailures, recentProbes,
                recentFailures);
    }

    public PairState withFinding(Finding f) {
        return new PairState(sourceNode, sourceGpu, targetNode, targetGpu, domain, targetDomain, state, stage, cuResult,
                cuResultName, f, ageSeconds, lastSuccess, lastProbe, durationSeconds, consecutiveFailures, recentProbes,
                recentFailures);
    }

    /** Whether the two GPUs are in different IMEX domains (known on both sides): apart by design. */
    public boolean acrossDomains() {
        return targetDomain != null;
    }

    /**
     * Across IMEX domains and never probed: apart by design, with nothing to tell but that (an on-demand probe or a
     * cross-domain sample that found the domains not isolated tells more).
     */
    public boolean apartByDesign() {
        return acrossDomains() && state == State.NOT_PROBED
                && (finding == null || finding.is(FindingCode.DIFFERENT_IMEX_DOMAIN));
    }
}
