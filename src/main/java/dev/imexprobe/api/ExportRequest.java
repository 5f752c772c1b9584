package dev.imexprobe.api;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonInclude;

import tools.jackson.databind.annotation.JsonDeserialize;

/**
 * POST /v1/exports: make a fresh pattern buffer and export it as a FABRIC handle. Every field is optional.
 *
 * @param gpu the exporting GPU, by index or UUID; the first when absent
 * @param sizeBytes the GPU's granularity when absent
 * @param seed the pattern's seed; a fresh one when absent
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ExportRequest(
        @JsonDeserialize(using = Fields.GpuRef.class)
        String gpu,

        @JsonDeserialize(using = Fields.WholeNumber.class)
        @Within(min = 1, message = "sizeBytes must be positive")
        Long sizeBytes,

        @JsonDeserialize(using = Fields.Text.class)
        @FabricOnly(message = "handleType must be FABRIC (POSIX_FD handles cannot travel over HTTP; the ladder uses "
                + "them on one host)")
        String handleType,

        @JsonDeserialize(using = Fields.WholeNumber.class) @JsonFormat(shape = JsonFormat.Shape.STRING)
        Long seed) implements WireRequest {
}
