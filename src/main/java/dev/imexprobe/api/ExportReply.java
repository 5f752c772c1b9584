package dev.imexprobe.api;

import com.fasterxml.jackson.annotation.JsonInclude;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import java.time.Instant;
import java.util.List;

/**
 * The answer to POST /v1/exports: the handle and where it lives when creation passed (201), or the failing
 * stages and finding when the driver refused (200, verdict fail). Never the memory's contents.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ExportReply(String id, String handle, String handleType, long sizeBytes, ExporterInfo exporter,
                          Instant expiresAt, Verdict verdict, List<StageResult> stages, Finding finding) {
}
