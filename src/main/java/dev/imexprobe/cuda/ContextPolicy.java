package dev.imexprobe.cuda;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether the agent may create a context on a GPU, decided from the driver's attributes, NVML's compute mode and MIG
 * mode before anything touches the GPU. A GPU that reports HANDLE_TYPE_FABRIC_SUPPORTED=0 or
 * VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED=0 cannot make fabric memory at all: its pairs cannot work by design, and a
 * context there would only take memory from jobs. In EXCLUSIVE_PROCESS a context of the agent's keeps a job's own
 * context out (the job's cuDevicePrimaryCtxRetain gets CUDA_ERROR_DEVICE_UNAVAILABLE); in PROHIBITED none can be
 * made; with MIG on, CUDA
 * runs on MIG instances, which the agent does not probe. Such a GPU gets an info finding and its pairs are
 * "not probed", never failed. A mode NVML could not read is no reason to refuse (the driver then decides).
 *
 * @param probeExclusiveProcess imexprobe.driver.probe-exclusive-process: the operator says the EXCLUSIVE_PROCESS
 *                              GPUs are kept idle for the agent, so it may take their one context
 */
public record ContextPolicy(boolean probeExclusiveProcess) {

    public static final ContextPolicy DEFAULT = new ContextPolicy(false);

    /** Why no context may be created on {@code gpu}, or null when one may. */
    public Finding refusal(GpuDevice gpu) {
        if (gpu == null) {
            return null;
        }
        FindingCode noFabricMemory = noFabricMemory(gpu);
        if (noFabricMemory != null) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("gpu", gpu.index());
            e.put("uuid", gpu.uuid());
            return noFabricMemory.finding(e);
        }
        if (Boolean.TRUE.equals(gpu.migEnabled())) {
            return FindingCode.MIG_ENABLED.finding(evidence(gpu));
        }
        ComputeMode mode = gpu.computeMode();
        if (mode == ComputeMode.PROHIBITED) {
            return FindingCode.COMPUTE_MODE_PROHIBITED.finding(evidence(gpu));
        }
        if ((mode == ComputeMode.EXCLUSIVE_PROCESS || mode == ComputeMode.EXCLUSIVE_THREAD) && !probeExclusiveProcess) {
            return FindingCode.COMPUTE_MODE_EXCLUSIVE_PROCESS.finding(evidence(gpu));
        }
        return null;
    }

    /**
     * Why {@code gpu} cannot make fabric memory at all (VMM_UNSUPPORTED, FABRIC_UNSUPPORTED), whatever its modes, or
     * null. Only an attribute the driver read as 0 counts: one it could not read leaves the driver to decide.
     */
    public static FindingCode noFabricMemory(GpuDevice gpu) {
        if (gpu.lacks(DeviceAttribute.VIRTUAL_MEMORY_MANAGEMENT)) {
            return FindingCode.VMM_UNSUPPORTED;
        }
        return gpu.lacks(DeviceAttribute.FABRIC) ? FindingCode.FABRIC_UNSUPPORTED : null;
    }

    private static Map<String, Object> evidence(GpuDevice gpu) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("gpu", gpu.index());
        e.put("uuid", gpu.uuid());
        e.put("computeMode", gpu.computeMode() == null ? null : gpu.computeMode().name());
        e.put("migEnabled", gpu.migEnabled());
        return e;
    }
}
