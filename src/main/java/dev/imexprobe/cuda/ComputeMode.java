package dev.imexprobe.cuda;

/**
 * NVML's compute mode of a GPU (nvmlComputeMode_t): who may hold a context on it. Set by the operator with
 * {@code nvidia-smi -c}; the agent only reads it.
 */
public enum ComputeMode {
    /** 0: any number of contexts from any process. */
    DEFAULT,
    /** 1: "Support Removed" in nvml.h; treated like EXCLUSIVE_PROCESS. */
    EXCLUSIVE_THREAD,
    /** 2: no context at all. */
    PROHIBITED,
    /** 3: one context, of one process, at a time: a context the agent holds keeps the job's out. */
    EXCLUSIVE_PROCESS;

    /** The mode of an nvmlComputeMode_t value; null for a value this agent does not know. */
    public static ComputeMode of(int nvmlValue) {
        ComputeMode[] all = values();
        return nvmlValue >= 0 && nvmlValue < all.length ? all[nvmlValue] : null;
    }
}
