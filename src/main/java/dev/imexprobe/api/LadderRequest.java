package dev.imexprobe.api;

import com.fasterxml.jackson.annotation.JsonInclude;

import tools.jackson.databind.annotation.JsonDeserialize;

/**
 * POST /v1/ladder: the isolation ladder on the agent's node. Every field is optional.
 *
 * @param gpus the exporting and importing GPU, "A,B"
 * @param timeoutSeconds the longest wait for one worker answer
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LadderRequest(
        @JsonDeserialize(using = Fields.Text.class)
        String gpus,

        @JsonDeserialize(using = Fields.WholeNumber.class)
        Long sizeBytes,

        @JsonDeserialize(using = Fields.WholeNumber.class)
        @Within(min = 1, max = MAX_TIMEOUT_SECONDS, message = "timeoutSeconds must be 1.." + MAX_TIMEOUT_SECONDS
                + " (the longest wait for one worker answer)")
        Long timeoutSeconds) implements WireRequest {

    /** The ladder's whole budget: no single wait may be longer. */
    public static final long MAX_TIMEOUT_SECONDS = 180;
}
