package dev.imexprobe.cuda;

import java.util.Set;

/**
 * The Java face of the CUDA driver and NVML: one method per driver call, results as data, no policy.
 * {@link JniCudaDriver} goes through the shim; tests of pure logic may use an in-JVM implementation.
 * Every method that takes an ordinal makes that device's primary context current first.
 */
public interface CudaDriver {

    DriverStatus status();

    CuResult init();

    CuCall<Integer> driverVersion();

    CuCall<Integer> deviceCount();

    CuCall<String> deviceName(int ordinal);

    /** "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and nvidia-smi write it. */
    CuCall<String> deviceUuid(int ordinal);

    CuCall<String> pciBusId(int ordinal);

    CuCall<Integer> attribute(int ordinal, DeviceAttribute attribute);

    /** {free, total} bytes of the device. */
    /**
     * Runs {@code work} with the GPU's primary context held throughout (the JNI driver otherwise holds it only
     * per call and allocation, plus a linger): for work whose before/after must see one context.
     */
    default <T> T withContext(int ordinal, java.util.function.Supplier<T> work) {
        return work.get();
    }

    CuCall<long[]> memoryInfo(int ordinal);

    CuCall<Long> granularity(int ordinal, Set<HandleType> types);

    CuCall<Long> memCreate(int ordinal, long size, Set<HandleType> types);

    CuResult memRelease(int ordinal, long handle);

    CuCall<FabricHandle> exportFabric(int ordinal, long handle);

    CuCall<Integer> exportPosixFd(int ordinal, long handle);

    CuCall<Long> importFabric(int ordinal, FabricHandle handle);

    CuCall<Long> importPosixFd(int ordinal, int fd);

    CuCall<Long> addressReserve(int ordinal, long size, long alignment);

    CuResult addressFree(int ordinal, long ptr, long size);

    CuResult map(int ordinal, long ptr, long size, long handle);

    CuResult unmap(int ordinal, long ptr, long size);

    CuResult setAccess(int ordinal, long ptr, long size, int accessOrdinal);

    CuResult fillPattern(int ordinal, long ptr, long size, long seed);

    /**
     * How fills on this GPU's current context write the pattern: 0 by the GPU's fill kernel, a CUresult when the
     * driver could not load it (then through host memory), -1 when no fill has run in this context yet.
     */
    default int patternKernel(int ordinal) {
        return -1;
    }

    /**
     * Compares {@code size} bytes at {@code ptr} with the seed's pattern (by the compare kernel where it loads, else
     * copied to the host); where the kernel reads it and {@code windowBytes > 0}, a copy engine reads that window at
     * {@code windowOffset} too and the host compares it. The result is the call's (the kernel's or the copies').
     */
    CuCall<PatternCheck> verifyPattern(int ordinal, long ptr, long size, long seed, long windowOffset, long windowBytes);

    /** Milliseconds for {@code iterations} device-to-device copies of {@code size} bytes on one stream. */
    CuCall<Float> copyTimed(int ordinal, long dst, long src, long size, int iterations);

    /** The driver's own explanation of a code (cuGetErrorString), or null. */
    String errorString(CuResult result);

    NvmlCall<String> nvmlDriverVersion();

    NvmlCall<FabricInfo> fabricInfo(String gpuUuid);

    /**
     * The UUIDs of the GPUs NVML reaches from this process. NVML ignores CUDA_VISIBLE_DEVICES but needs each GPU's
     * /dev/nvidiaN, so a GPU here and not among CUDA's is one the process has but CUDA_VISIBLE_DEVICES hides.
     */
    default NvmlCall<java.util.List<String>> nvmlGpuUuids() {
        return NvmlCall.failed(NvmlReturn.NOT_SUPPORTED);
    }

    /** nvmlDeviceGetComputeMode: the nvmlComputeMode_t value (no context needed). */
    default NvmlCall<Integer> computeMode(String gpuUuid) {
        return NvmlCall.failed(NvmlReturn.NOT_SUPPORTED);
    }

    /** nvmlDeviceGetMigMode: {current, pending}, 1 = enabled (no context needed). */
    default NvmlCall<int[]> migMode(String gpuUuid) {
        return NvmlCall.failed(NvmlReturn.NOT_SUPPORTED);
    }

    /**
     * nvmlDeviceGetMemoryInfo: {total, free, used} bytes of the whole GPU, every process's memory counted (no context
     * needed, so it can be asked before the agent takes any).
     */
    default NvmlCall<long[]> nvmlMemory(String gpuUuid) {
        return NvmlCall.failed(NvmlReturn.NOT_SUPPORTED);
    }

    /** Whether this process holds the GPU's primary context now (its own memory is then among the used). */
    default boolean contextHeld(int ordinal) {
        return false;
    }

    /** Closes a file descriptor this process holds (an exported POSIX_FD handle). */
    void closeFd(int fd);
}
