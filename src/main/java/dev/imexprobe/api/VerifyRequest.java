package dev.imexprobe.api;

import com.fasterxml.jackson.annotation.JsonFormat;

import jakarta.validation.constraints.NotNull;

import tools.jackson.databind.annotation.JsonDeserialize;

/** POST /v1/exports/{id}/verify: check the importer's write-back, the pattern of {@code seed}. */
public record VerifyRequest(
        @JsonDeserialize(using = Fields.WholeNumber.class) @JsonFormat(shape = JsonFormat.Shape.STRING)
        @NotNull(message = "seed is required: the seed of the pattern the importer wrote")
        Long seed) implements WireRequest {
}
