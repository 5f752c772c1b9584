package dev.imexprobe.web;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.node.NodeService;

/** Checks shared by the export and import endpoints. */
final class Requests {

    private Requests() {
    }

    /** The GPU a request names (index or UUID), or the first; 400 naming the GPUs that exist otherwise. */
    static GpuDevice gpu(NodeService node, String selector) {
        try {
            return node.resolveGpu(selector);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        }
    }

    /**
     * The allocation size to use: the GPU's granularity when absent; otherwise a multiple of it no larger than
     * the cap (413 above the cap, 400 for anything else). {@code requested} is positive: the request's
     * constraint, checked before.
     */
    static long size(Long requested, GpuDevice gpu, long maxBytes) {
        long granularity = gpu.granularityBytes();
        // A GPU the agent creates no context on (FABRIC_UNSUPPORTED has no granularity) answers with its finding
        if (granularity <= 0 && gpu.notProbed() == null) {
            throw ApiException.invalid("GPU " + gpu.index() + " reports no FABRIC allocation granularity: it cannot "
                    + "hold fabric memory (see GET /v1/node)");
        }
        if (requested == null) {
            return granularity;
        }
        if (requested > maxBytes) {
            throw ApiException.overCap("sizeBytes " + requested + " is over this agent's cap of " + maxBytes
                    + " bytes (imexprobe.exports.maxbytes)");
        }
        // the one rule of check, the ladder and the mesh size (GpuDevice.sizeRefusal), worded the same
        String refusal = gpu.sizeRefusal(requested);
        if (refusal != null) {
            throw ApiException.invalid("sizeBytes: " + refusal);
        }
        return requested;
    }
}
