package dev.imexprobe.cuda;

/**
 * The one way into NVML. NVML has had thread-safety bugs (NCCL serialises every NVML call for that reason), and
 * node reports are built on several driver threads at once, so every NVML call of this process runs here, one at
 * a time, under this class's lock: the natives are private and each operation below is {@code synchronized}. A
 * handle is looked up and used under the same lock. Each native returns an nvmlReturn_t as an int; handles are
 * opaque longs.
 */
final class NvmlNative {

    static {
        NativeLibrary.load();
    }

    /** nvmlInit_v2's result, asked once per process (NVML's state is the process's, not a driver object's). */
    private static NvmlReturn initResult;

    private NvmlNative() {
    }

    /** nvmlInit_v2 once; later calls answer its first result. {@code loaded}: the shim found libnvidia-ml. */
    static synchronized NvmlReturn initOnce(boolean loaded) {
        if (!loaded) {
            return NvmlReturn.LIBRARY_NOT_FOUND;
        }
        if (initResult == null) {
            initResult = NvmlReturn.of(init());
        }
        return initResult;
    }

    static synchronized NvmlCall<String> driverVersion(boolean loaded) {
        NvmlReturn init = initOnce(loaded);
        if (!init.ok()) {
            return NvmlCall.failed(init);
        }
        String[] out = new String[1];
        int rc = systemGetDriverVersion(out);
        return rc == 0 ? NvmlCall.ok(out[0]) : NvmlCall.failed(NvmlReturn.of(rc));
    }

    static synchronized NvmlCall<FabricInfo> fabricInfo(boolean loaded, String gpuUuid) {
        return onDevice(loaded, gpuUuid, handle -> {
            int[] raw = new int[6];
            byte[] cluster = new byte[16];
            int rc = deviceGetGpuFabricInfo(handle, raw, cluster);
            return rc == 0 ? NvmlCall.ok(FabricInfo.decode(raw, cluster)) : NvmlCall.failed(NvmlReturn.of(rc));
        });
    }

    /**
     * The UUIDs of the GPUs NVML reaches from this process, by index. NVML ignores CUDA_VISIBLE_DEVICES but cannot
     * open a GPU whose /dev/nvidiaN the process lacks: such a GPU is left out, whether NVML counts it or not.
     */
    static synchronized NvmlCall<java.util.List<String>> gpuUuids(boolean loaded) {
        NvmlReturn init = initOnce(loaded);
        if (!init.ok()) {
            return NvmlCall.failed(init);
        }
        int[] count = new int[1];
        int rc = deviceGetCount(count);
        if (rc != 0) {
            return NvmlCall.failed(NvmlReturn.of(rc));
        }
        java.util.List<String> uuids = new java.util.ArrayList<>();
        long[] handle = new long[1];
        String[] uuid = new String[1];
        for (int i = 0; i < count[0]; i++) {
            if (deviceGetHandleByIndex(i, handle) == 0 && deviceGetUuid(handle[0], uuid) == 0) {
                uuids.add(uuid[0]);
            }
        }
        return NvmlCall.ok(java.util.List.copyOf(uuids));
    }

    /** nvmlDeviceGetComputeMode: the nvmlComputeMode_t value. */
    static synchronized NvmlCall<Integer> computeMode(boolean loaded, String gpuUuid) {
        return byUuid(loaded, gpuUuid, 1, NvmlNative::deviceGetComputeMode, out -> out[0]);
    }

    /** nvmlDeviceGetMigMode: {current, pending}. */
    static synchronized NvmlCall<int[]> migMode(boolean loaded, String gpuUuid) {
        return byUuid(loaded, gpuUuid, 2, NvmlNative::deviceGetMigMode, out -> out);
    }

    /** nvmlDeviceGetMemoryInfo: {total, free, used} in bytes, as nvidia-smi shows them (no context needed). */
    static synchronized NvmlCall<long[]> memoryInfo(boolean loaded, String gpuUuid) {
        return onDevice(loaded, gpuUuid, handle -> {
            long[] out = new long[3];
            int rc = deviceGetMemoryInfo(handle, out);
            return rc == 0 ? NvmlCall.ok(out) : NvmlCall.failed(NvmlReturn.of(rc));
        });
    }

    private interface IntsCall {
        int call(long handle, int[] out);
    }

    /** One per-device call that fills an int array, under this class's lock (callers are synchronized). */
    private static <T> NvmlCall<T> byUuid(boolean loaded, String gpuUuid, int outLength, IntsCall call,
                                          java.util.function.Function<int[], T> value) {
        return onDevice(loaded, gpuUuid, handle -> {
            int[] out = new int[outLength];
            int rc = call.call(handle, out);
            return rc == 0 ? NvmlCall.ok(value.apply(out)) : NvmlCall.failed(NvmlReturn.of(rc));
        });
    }

    /** NVML initialised once and the GPU's handle looked up by UUID, then the call on that handle. */
    private static <T> NvmlCall<T> onDevice(boolean loaded, String gpuUuid,
                                            java.util.function.LongFunction<NvmlCall<T>> call) {
        NvmlReturn init = initOnce(loaded);
        if (!init.ok()) {
            return NvmlCall.failed(init);
        }
        long[] handle = new long[1];
        int rc = deviceGetHandleByUuid(gpuUuid, handle);
        return rc == 0 ? call.apply(handle[0]) : NvmlCall.failed(NvmlReturn.of(rc));
    }

    // ---- the natives, registered by native/src/jni_bridge.c; called only from the synchronized methods above ----

    private static native int init();

    private static native int systemGetDriverVersion(String[] out);

    private static native int deviceGetCount(int[] out);

    private static native int deviceGetHandleByIndex(int index, long[] out);

    private static native int deviceGetHandleByUuid(String uuid, long[] out);

    private static native int deviceGetUuid(long handle, String[] out);

    /** out = {structVersion (3, 2 or 1), status, cliqueId, state, healthMask, healthSummary}. */
    private static native int deviceGetGpuFabricInfo(long handle, int[] out, byte[] clusterUuid16);

    /** out = {nvmlComputeMode_t}. */
    private static native int deviceGetComputeMode(long handle, int[] out);

    /** out = {currentMode, pendingMode}: NVML_DEVICE_MIG_DISABLE (0) or NVML_DEVICE_MIG_ENABLE (1). */
    private static native int deviceGetMigMode(long handle, int[] out);

    /** out = {total, free, used}, bytes. */
    private static native int deviceGetMemoryInfo(long handle, long[] out);

    private static native String errorString(int code);
}
