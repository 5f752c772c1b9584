package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/** The answer to GET /probe: every pair and direction probed, and the overall verdict. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProbeReport(String target, String targetNode, Verdict verdict, double durationSeconds,
                          List<PairResult> results) {
}
