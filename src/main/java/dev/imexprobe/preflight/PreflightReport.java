package dev.imexprobe.preflight;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import dev.imexprobe.finding.Finding;

import java.util.List;

/**
 * What {@code preflight --json} prints; the table is the same, for humans.
 *
 * @param result         {@code pass} (exit 0), {@code fail} (1) or {@code unknown} (2)
 * @param instances      every instance that took part, this one first
 * @param pairs          every exchange, exporter → importer, by instance id
 * @param verdict        the one finding that sums the run up (absent when everything passed)
 * @param findings       each failing pair's finding, then each unprobed pair's, grouped by the instance it blames
 * @param nextSteps      what to run next, and where
 * @param missingResults instances whose pairs never reached this one before the deadline
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
@JsonPropertyOrder({"result", "exitCode", "expected", "instances", "pairs", "verdict", "findings", "nextSteps",
        "missingResults", "durationSeconds"})
public record PreflightReport(String result, int exitCode, int expected, List<Instance> instances,
                              List<PreflightPair> pairs, Finding verdict, List<Blamed> findings,
                              List<String> nextSteps, List<String> missingResults, double durationSeconds) {

    public static final int PASS = 0;
    public static final int FAIL = 1;
    public static final int UNKNOWN = 2;

    /**
     * A finding of the failing pairs, with the instance it blames.
     *
     * @param instance the blamed instance's name
     * @param node     its node
     * @param pairs    how many failing pairs gave this finding against it
     * @param examples up to three of those pairs, "exporter -> importer"
     */
    @JsonPropertyOrder({"instance", "node", "pairs", "examples", "finding"})
    public record Blamed(String instance, String node, int pairs, List<String> examples, Finding finding) {
    }
}
