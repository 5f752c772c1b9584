package dev.imexprobe.cuda;

/** The natives of the shim's NVML table. Each returns an nvmlReturn_t as an int; handles are opaque longs. */
final class NvmlNative {

    static {
        NativeLibrary.load();
    }

    private NvmlNative() {
    }

    static native int init();

    static native int systemGetDriverVersion(String[] out);

    static native int deviceGetCount(int[] out);

    static native int deviceGetHandleByIndex(int index, long[] out);

    static native int deviceGetHandleByUuid(String uuid, long[] out);

    static native int deviceGetUuid(long handle, String[] out);

    /** out = {structVersion (3, 2 or 1), status, cliqueId, state, healthMask, healthSummary}. */
    static native int deviceGetGpuFabricInfo(long handle, int[] out, byte[] clusterUuid16);

    static native String errorString(int code);
}
