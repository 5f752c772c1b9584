package dev.imexprobe.cuda;

/**
 * The natives of the shim's CUDA table (native/src/jni_bridge.c). Each returns the driver's CUresult as an int
 * and fills the caller's arrays; nothing here interprets a result. Only {@link JniCudaDriver} calls these.
 */
final class CudaNative {

    static {
        NativeLibrary.load();
    }

    private CudaNative() {
    }

    /** out = {cudaLibrary, cudaMessage, nvmlLibrary, nvmlMessage}; returns bit 0 = CUDA usable, bit 1 = NVML usable. */
    static native int open(String cudaLibrary, String nvmlLibrary, String[] out);

    static native String fakeInfo();

    static native String[] missingEntryPoints();

    static native int init();

    static native int driverGetVersion(int[] out);

    static native int deviceGetCount(int[] out);

    static native int deviceGetName(int ordinal, String[] out);

    static native int deviceGetUuid(int ordinal, byte[] out16);

    static native int deviceGetPciBusId(int ordinal, String[] out);

    static native int deviceGetAttribute(int attribute, int ordinal, int[] out);

    static native int memGetInfo(int ordinal, long[] freeAndTotal);

    static native int memGetAllocationGranularity(int ordinal, int handleTypes, boolean recommended, long[] out);

    static native int memCreate(int ordinal, long size, int handleTypes, long[] outHandle);

    static native int memRelease(int ordinal, long handle);

    static native int memExportFabric(int ordinal, long handle, byte[] out64);

    static native int memExportPosixFd(int ordinal, long handle, int[] outFd);

    static native int memImportFabric(int ordinal, byte[] handle64, long[] outHandle);

    static native int memImportPosixFd(int ordinal, int fd, long[] outHandle);

    static native int memAddressReserve(int ordinal, long size, long alignment, long[] outPtr);

    static native int memAddressFree(int ordinal, long ptr, long size);

    static native int memMap(int ordinal, long ptr, long size, long handle);

    static native int memUnmap(int ordinal, long ptr, long size);

    static native int memSetAccess(int ordinal, long ptr, long size, int accessOrdinal);

    /** Fills by the pattern kernel where the GPU's context could load it, else through page-locked host memory. */
    static native int memFillPattern(int ordinal, long ptr, long size, long seed);

    /** 0 when the GPU's current context fills by the kernel, -1 when no fill ran in it yet, else why not (a CUresult). */
    static native int patternKernel(int ordinal);

    /**
     * out[0] = byte offset of the first word that differs, or -1; where the compare kernel ran and windowBytes > 0,
     * out[1] = 1, out[2] = the window's first differing byte offset or -1, out[3] its copy's CUresult, out[4] = 1
     * when the copy ran beside the kernel.
     */
    static native int memVerifyPattern(int ordinal, long ptr, long size, long seed, long windowOffset,
                                       long windowBytes, long[] out);

    /** out[0] = milliseconds for all iterations of a device-to-device copy on a private stream. */
    static native int memcpyDtoDTimed(int ordinal, long dst, long src, long size, int iterations, float[] out);

    static native int ctxSynchronize(int ordinal);

    /** Drops this process's primary context of a GPU: 1 released, 0 none held, negative a CUresult. */
    static native int ctxRelease(int ordinal);

    static native boolean ctxHeld(int ordinal);

    static native String getErrorName(int code);

    static native String getErrorString(int code);
}
