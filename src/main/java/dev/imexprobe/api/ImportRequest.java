package dev.imexprobe.api;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonInclude;

import dev.imexprobe.cuda.FabricHandle;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;

import tools.jackson.databind.annotation.JsonDeserialize;

/**
 * POST /v1/imports: import a FABRIC handle exported elsewhere. With {@code seed} the pattern is verified (and with
 * {@code writebackSeed} written back for the exporter to check); without, import, map and access only.
 *
 * @param gpu the importing GPU, by index or UUID; the first when absent
 * @param exporterNode the exporter's node, so the diagnosis can tell same-node from cross-node
 * @param exporterGpu  the exporter's GPU UUID, so the diagnosis can tell whether this container lacks that GPU
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonAutoDetect(isGetterVisibility = JsonAutoDetect.Visibility.NONE)
public record ImportRequest(
        @JsonDeserialize(using = Fields.Text.class)
        @NotBlank(message = "handle is required: the 64-byte FABRIC handle as base64")
        @FabricHandleText
        String handle,

        @JsonDeserialize(using = Fields.Text.class)
        @NotBlank(message = "handleType is required: FABRIC")
        @FabricOnly(message = "handleType must be FABRIC (only fabric handles travel over HTTP)")
        String handleType,

        @JsonDeserialize(using = Fields.WholeNumber.class)
        @NotNull(message = "sizeBytes is required: the size the exporter allocated")
        @Within(min = 1, message = "sizeBytes must be positive")
        Long sizeBytes,

        @JsonDeserialize(using = Fields.GpuRef.class)
        String gpu,

        @JsonDeserialize(using = Fields.WholeNumber.class) @JsonFormat(shape = JsonFormat.Shape.STRING)
        Long seed,

        @JsonDeserialize(using = Fields.WholeNumber.class) @JsonFormat(shape = JsonFormat.Shape.STRING)
        Long writebackSeed,

        @JsonDeserialize(using = Fields.Text.class)
        String exporterNode,

        @JsonDeserialize(using = Fields.Text.class)
        String exporterGpu) implements WireRequest {

    /** The handle's bytes; call after validation. */
    public FabricHandle fabricHandle() {
        return FabricHandle.fromBase64(handle);
    }

    @AssertTrue(message = "writebackSeed needs seed: write-back is only checked after a verified read")
    boolean isWritebackAfterSeed() {
        return writebackSeed == null || seed != null;
    }
}
