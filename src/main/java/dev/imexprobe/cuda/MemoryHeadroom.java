package dev.imexprobe.cuda;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import org.springframework.util.unit.DataSize;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether a GPU has memory to spare for a context of the agent's, asked before the agent takes one. A context takes
 * about 520 MiB (docs/performance.md), and a job that has filled its GPU would get CUDA_ERROR_OUT_OF_MEMORY for
 * what it allocates next while the agent holds it, so below {@code minFreeBytes} of free memory (NVML's count: every
 * process's memory) the agent creates none and the pair is "not probed" (GPU_MEMORY_IN_USE), never failed. Judged
 * when the node report is made (node/NodeReporter), only for a GPU whose context the agent does not hold then: once it
 * holds one, its own memory is among the used.
 *
 * @param minFreeBytes imexprobe.driver.min-free-memory; 0 turns the check off
 */
public record MemoryHeadroom(long minFreeBytes) {

    public static final MemoryHeadroom OFF = new MemoryHeadroom(0);
    /** imexprobe.driver.min-free-memory's default, for the agent and for check alike. */
    public static final String DEFAULT = "4GB";
    private static final long MIB = 1024 * 1024;

    /**
     * From a setting in Spring's size form (4GB, 512MB, 0), {@link #DEFAULT} when unset: how {@code check}, which
     * starts no Spring context, reads IMEXPROBE_DRIVER_MINFREEMEMORY as the agent does.
     */
    public static MemoryHeadroom parse(String setting) {
        if (setting == null || setting.isBlank()) {
            return parse(DEFAULT);
        }
        try {
            return new MemoryHeadroom(DataSize.parse(setting.strip()).toBytes());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("IMEXPROBE_DRIVER_MINFREEMEMORY must be a size such as 4GB, 512MB or 0, "
                    + "got '" + setting + "'");
        }
    }

    public MemoryHeadroom {
        if (minFreeBytes < 0) {
            throw new IllegalArgumentException("imexprobe.driver.min-free-memory must not be negative, got "
                    + minFreeBytes + " bytes");
        }
    }

    public boolean on() {
        return minFreeBytes > 0;
    }

    /**
     * Why no context may be created on {@code gpu} now, whose memory NVML reports as {@code memory} = {total, free,
     * used} bytes, or null. Memory NVML could not tell (null) is no reason to refuse: the driver then decides.
     */
    public Finding refusal(GpuDevice gpu, long[] memory) {
        if (!on() || gpu == null || memory == null || memory.length < 3 || memory[1] >= minFreeBytes) {
            return null;
        }
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("gpu", gpu.index());
        e.put("uuid", gpu.uuid());
        e.put("freeMiB", memory[1] / MIB);
        e.put("usedMiB", memory[2] / MIB);
        e.put("totalMiB", memory[0] / MIB);
        e.put("minFreeMiB", minFreeBytes / MIB);
        return FindingCode.GPU_MEMORY_IN_USE.finding(e);
    }
}
