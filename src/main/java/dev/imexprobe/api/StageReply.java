package dev.imexprobe.api;

import dev.imexprobe.probe.StageResult;

/** The answer to POST /v1/exports/{id}/verify and DELETE /v1/exports/{id}: the one stage that ran. */
public record StageReply(StageResult stage) {
}
