package dev.imexprobe.api;

/**
 * A request body of the REST API: parsed and checked only by {@link Wire} (strict: unknown fields refused, each
 * field's JSON type checked with a message naming it), then by its Bean Validation constraints.
 */
public sealed interface WireRequest permits ImportRequest, ExportRequest, VerifyRequest, LadderRequest {
}
