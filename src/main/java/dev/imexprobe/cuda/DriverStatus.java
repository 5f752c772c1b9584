package dev.imexprobe.cuda;

import java.util.List;
import java.util.Map;

/**
 * What loading the NVIDIA libraries found.
 *
 * @param cudaLoaded   every required CUDA entry point resolved
 * @param cudaLibrary  the file that was opened, or null
 * @param cudaMessage  why CUDA is unusable, or which optional entry points are missing; null when all is well
 * @param fake         the fake driver's self-description (fakecudaInfo), or null for a real driver
 */
public record DriverStatus(boolean cudaLoaded, String cudaLibrary, String cudaMessage, boolean nvmlLoaded,
                           String nvmlLibrary, String nvmlMessage, Map<String, String> fake,
                           List<String> missingOptionalEntryPoints) {

    public boolean isFake() {
        return fake != null;
    }

    /** The sentence a user reads when no driver could be used. */
    public String unavailableReason() {
        if (cudaLoaded) {
            return null;
        }
        if (cudaLibrary == null) {
            return "no NVIDIA driver library found (" + (cudaMessage == null ? "tried libcuda.so.1" : cudaMessage)
                    + "); on a GPU node, run inside a container with the NVIDIA runtime or set IMEXPROBE_CUDA_LIBRARY";
        }
        return "the NVIDIA driver library " + cudaLibrary + " cannot be used: " + cudaMessage;
    }
}
