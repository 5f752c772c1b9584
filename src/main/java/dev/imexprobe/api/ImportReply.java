package dev.imexprobe.api;

import com.fasterxml.jackson.annotation.JsonInclude;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import java.util.List;

/** The answer to POST /v1/imports: the importer's stages and verdict; never the memory's contents. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ImportReply(Verdict verdict, double durationSeconds, String node, String agentId, int gpu,
                          String gpuUuid, List<StageResult> stages, Finding finding) {
}
