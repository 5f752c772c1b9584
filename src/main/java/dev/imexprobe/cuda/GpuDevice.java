package dev.imexprobe.cuda;

import java.util.List;
import java.util.Map;

/**
 * One GPU as this process sees it: ordinal (after CUDA_VISIBLE_DEVICES), identity, the attributes fabric
 * memory depends on, the allocation granularity, and NVML's view of its fabric registration.
 *
 * @param attributes       attribute name → value, or the CUresult name when reading it failed
 * @param granularityBytes the minimum granularity of a FABRIC allocation; 0 when the driver refused to say
 * @param fabric           null when NVML could not be asked; fabricResult says why
 * @param memoryFreeBytes  free device memory (cuMemGetInfo) when the report was made; null when unknown. The
 *                         VM the H200 runs in reports no memory use through nvidia-smi, so this is how a leak shows.
 * @param computeMode      NVML's compute mode; null when NVML could not say
 * @param migEnabled       NVML's current MIG mode (false where the GPU has no MIG); null when NVML could not say
 * @param notProbed        the finding code that keeps this agent from creating a context on the GPU
 *                         ({@link ContextPolicy}); null when it probes the GPU. Peers read it to mark their pairs
 *                         into this GPU "not probed".
 */
public record GpuDevice(int index, String uuid, String name, String pciBusId, Map<String, Object> attributes,
                        long granularityBytes, FabricInfo fabric, NvmlReturn fabricResult, Long memoryFreeBytes,
                        Long memoryTotalBytes, String imexDomain, ComputeMode computeMode, Boolean migEnabled,
                        String notProbed) {

    public GpuDevice(int index, String uuid, String name, String pciBusId, Map<String, Object> attributes,
                     long granularityBytes, FabricInfo fabric, NvmlReturn fabricResult, Long memoryFreeBytes,
                     Long memoryTotalBytes, String imexDomain) {
        this(index, uuid, name, pciBusId, attributes, granularityBytes, fabric, fabricResult, memoryFreeBytes,
                memoryTotalBytes, imexDomain, null, null, null);
    }

    /** As the inventory sees it: the IMEX domain is the node's to say ({@link #withImexDomain}). */
    public GpuDevice(int index, String uuid, String name, String pciBusId, Map<String, Object> attributes,
                     long granularityBytes, FabricInfo fabric, NvmlReturn fabricResult, Long memoryFreeBytes,
                     Long memoryTotalBytes) {
        this(index, uuid, name, pciBusId, attributes, granularityBytes, fabric, fabricResult, memoryFreeBytes,
                memoryTotalBytes, null);
    }

    public GpuDevice withImexDomain(String domain) {
        return new GpuDevice(index, uuid, name, pciBusId, attributes, granularityBytes, fabric, fabricResult,
                memoryFreeBytes, memoryTotalBytes, domain, computeMode, migEnabled, notProbed);
    }

    /** With NVML's compute mode and MIG mode (read before anything touches the GPU). */
    public GpuDevice withModes(ComputeMode mode, Boolean mig) {
        return new GpuDevice(index, uuid, name, pciBusId, attributes, granularityBytes, fabric, fabricResult,
                memoryFreeBytes, memoryTotalBytes, imexDomain, mode, mig, notProbed);
    }

    /**
     * Why this agent cannot allocate {@code size} bytes of fabric memory here, or null: cuMemCreate refuses any size
     * that is not a multiple of the granularity with INVALID_VALUE, which a probe would report as the GPU's own
     * DRIVER_ERROR. Null also where the agent does not probe the GPU or the driver did not say its granularity.
     */
    public String sizeRefusal(long size) {
        return notProbed == null ? sizeRefusal(index, granularityBytes, size) : null;
    }

    /** The first of these GPUs' refusals of {@code size} ({@link #sizeRefusal(long)}), or null when none refuses. */
    public static String sizeRefusal(List<GpuDevice> gpus, long size) {
        for (GpuDevice g : gpus) {
            String why = g.sizeRefusal(size);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    /** The same rule for a GPU known by its index and granularity (the ladder's workers report no more). */
    public static String sizeRefusal(int index, long granularityBytes, long size) {
        return granularityBytes > 0 && size % granularityBytes != 0
                ? size + " bytes is not a multiple of GPU " + index + "'s allocation granularity (" + granularityBytes
                        + " bytes)"
                : null;
    }

    /** With the code of the finding that keeps the agent off this GPU (null: it probes it). */
    public GpuDevice withNotProbed(String findingCode) {
        return new GpuDevice(index, uuid, name, pciBusId, attributes, granularityBytes, fabric, fabricResult,
                memoryFreeBytes, memoryTotalBytes, imexDomain, computeMode, migEnabled, findingCode);
    }

    /**
     * Whether a process has the GPU with {@code uuid} (an importer, its exporter's GPU), from what CUDA and NVML show
     * it. {@code TRUE} when CUDA enumerates it or NVML reaches it: then only CUDA_VISIBLE_DEVICES hides it, its
     * device node is here, and imports from it work (measured on two H200s). {@code FALSE} when NVML could say and
     * does not reach it, or when CUDA_VISIBLE_DEVICES is unset (CUDA shows every GPU the process can open) and CUDA
     * lacks it: its device node is not here. {@code null} when CUDA lacks it, CUDA_VISIBLE_DEVICES is set (or not
     * known) and NVML could not say: either limit may be the one, and a finding must not name the device nodes.
     *
     * @param inCuda                 CUDA enumerates the GPU in this process
     * @param nvmlGpus               the UUIDs NVML reaches from this process; null when NVML could not say
     * @param cudaVisibleDevicesSet  CUDA_VISIBLE_DEVICES is set in this process; null when not known
     */
    public static Boolean reached(boolean inCuda, List<String> nvmlGpus, Boolean cudaVisibleDevicesSet, String uuid) {
        if (inCuda) {
            return true;
        }
        if (nvmlGpus != null) {
            return nvmlGpus.contains(uuid);
        }
        return Boolean.FALSE.equals(cudaVisibleDevicesSet) ? Boolean.FALSE : null;
    }

    /** Whether {@code gpus} holds the GPU with {@code uuid} (a loop: it runs on every exchange). */
    public static boolean holds(List<GpuDevice> gpus, String uuid) {
        for (GpuDevice g : gpus) {
            if (g.uuid().equals(uuid)) {
                return true;
            }
        }
        return false;
    }

    /** A UUID as people read it in tables: {@code GPU-} and the first eight hex digits. */
    public static String shortUuid(String uuid) {
        return uuid.startsWith("GPU-") && uuid.length() > 12 ? uuid.substring(0, 12) : uuid;
    }

    public boolean supports(DeviceAttribute attribute) {
        return Integer.valueOf(1).equals(attributes.get(attributeKey(attribute)));
    }

    /** Whether the driver read the attribute and said 0: the GPU lacks it. An attribute it could not read is not. */
    public boolean lacks(DeviceAttribute attribute) {
        return Integer.valueOf(0).equals(attributes.get(attributeKey(attribute)));
    }

    public static String attributeKey(DeviceAttribute attribute) {
        return switch (attribute) {
            case VIRTUAL_MEMORY_MANAGEMENT -> "virtualMemoryManagement";
            case POSIX_FILE_DESCRIPTOR -> "posixFileDescriptor";
            case GPU_DIRECT_RDMA_WITH_CUDA_VMM -> "gpuDirectRdmaWithCudaVmm";
            case FABRIC -> "fabric";
            case MULTICAST -> "multicast";
            case COMPUTE_CAPABILITY_MAJOR -> "computeCapabilityMajor";
            case COMPUTE_CAPABILITY_MINOR -> "computeCapabilityMinor";
        };
    }
}
