package dev.imexprobe.cuda;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link CudaDriver} through the JNI shim. The shim opens the libraries once per process, so there is one
 * instance per process ({@link #get()}); NVML is initialised lazily and its failure only costs fabric info.
 */
public final class JniCudaDriver implements CudaDriver {

    private static volatile JniCudaDriver instance;

    private final DriverStatus status;
    private final PrimaryContexts contexts = new PrimaryContexts(o -> CudaNative.ctxRelease(o) == 1,
            Duration.ofSeconds(2));

    private JniCudaDriver(DriverStatus status) {
        this.status = status;
    }

    /** Opens the libraries named by IMEXPROBE_CUDA_LIBRARY / IMEXPROBE_NVML_LIBRARY, or the sonames. */
    public static JniCudaDriver get() {
        JniCudaDriver d = instance;
        if (d == null) {
            synchronized (JniCudaDriver.class) {
                d = instance;
                if (d == null) {
                    d = new JniCudaDriver(open());
                    instance = d;
                }
            }
        }
        return d;
    }

    private static DriverStatus open() {
        String[] out = new String[4];
        int loaded = CudaNative.open(null, null, out);
        boolean cuda = (loaded & 1) != 0;
        if (cuda) {
            // Every other call needs it; its own result is asked for again (and reported) by init().
            CudaNative.init();
        }
        String fakeText = cuda || out[0] != null ? CudaNative.fakeInfo() : null;
        List<String> missing = cuda ? List.of(CudaNative.missingEntryPoints()) : List.of();
        return new DriverStatus(cuda, out[0], out[1], (loaded & 2) != 0, out[2], out[3], parseFakeInfo(fakeText),
                missing);
    }

    static Map<String, String> parseFakeInfo(String text) {
        if (text == null) {
            return null;
        }
        Map<String, String> info = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                info.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        return Map.copyOf(info);
    }

    @Override
    public DriverStatus status() {
        if (status.fake() == null) {
            return status;
        }
        // The fake's counters move; read them afresh.
        return new DriverStatus(status.cudaLoaded(), status.cudaLibrary(), status.cudaMessage(), status.nvmlLoaded(),
                status.nvmlLibrary(), status.nvmlMessage(), parseFakeInfo(CudaNative.fakeInfo()),
                status.missingOptionalEntryPoints());
    }

    @Override
    public CuResult init() {
        return CuResult.of(CudaNative.init());
    }

    @Override
    public CuCall<Integer> driverVersion() {
        int[] out = new int[1];
        return call(CudaNative.driverGetVersion(out), out[0]);
    }

    @Override
    public CuCall<Integer> deviceCount() {
        int[] out = new int[1];
        return call(CudaNative.deviceGetCount(out), out[0]);
    }

    @Override
    public CuCall<String> deviceName(int ordinal) {
        String[] out = new String[1];
        return call(CudaNative.deviceGetName(ordinal, out), out[0]);
    }

    @Override
    public CuCall<String> deviceUuid(int ordinal) {
        byte[] out = new byte[16];
        int rc = CudaNative.deviceGetUuid(ordinal, out);
        return call(rc, "GPU-" + FabricInfo.uuid(out));
    }

    @Override
    public CuCall<String> pciBusId(int ordinal) {
        String[] out = new String[1];
        return call(CudaNative.deviceGetPciBusId(ordinal, out), out[0]);
    }

    @Override
    public CuCall<Integer> attribute(int ordinal, DeviceAttribute attribute) {
        int[] out = new int[1];
        return call(CudaNative.deviceGetAttribute(attribute.code(), ordinal, out), out[0]);
    }

    /** When this process holds each GPU's primary context (see {@link PrimaryContexts}). */
    public PrimaryContexts contexts() {
        return contexts;
    }

    /** Free and total memory need a context: asked only while one is held anyway, else NOT_INITIALIZED. */
    @Override
    public CuCall<long[]> memoryInfo(int ordinal) {
        long[] out = new long[2];
        CuCall<long[]> r = contexts.ifHeld(ordinal, () -> call(CudaNative.memGetInfo(ordinal, out), out));
        return r != null ? r : CuCall.failed(CuResult.NOT_INITIALIZED);
    }

    @Override
    public CuCall<Long> granularity(int ordinal, Set<HandleType> types) {
        long[] out = new long[1];
        return call(CudaNative.memGetAllocationGranularity(ordinal, HandleType.mask(types), false, out), out[0]);
    }

    @Override
    public CuCall<Long> memCreate(int ordinal, long size, Set<HandleType> types) {
        long[] out = new long[1];
        return holding(ordinal, contexts.with(ordinal, () -> call(CudaNative.memCreate(ordinal, size,
                HandleType.mask(types), out), out[0])));
    }

    @Override
    public CuResult memRelease(int ordinal, long handle) {
        CuResult r = contexts.with(ordinal, () -> CuResult.of(CudaNative.memRelease(ordinal, handle)));
        if (r.ok()) {
            contexts.exit(ordinal); // the allocation's hold: a handle the driver did not release keeps it
        }
        return r;
    }

    @Override
    public CuCall<FabricHandle> exportFabric(int ordinal, long handle) {
        byte[] out = new byte[FabricHandle.SIZE];
        int rc = contexts.with(ordinal, () -> CudaNative.memExportFabric(ordinal, handle, out));
        return rc == 0 ? CuCall.ok(FabricHandle.of(out)) : CuCall.failed(CuResult.of(rc));
    }

    @Override
    public CuCall<Integer> exportPosixFd(int ordinal, long handle) {
        int[] out = new int[1];
        return contexts.with(ordinal, () -> call(CudaNative.memExportPosixFd(ordinal, handle, out), out[0]));
    }

    @Override
    public CuCall<Long> importFabric(int ordinal, FabricHandle handle) {
        long[] out = new long[1];
        return holding(ordinal, contexts.with(ordinal, () -> call(CudaNative.memImportFabric(ordinal, handle.bytes(),
                out), out[0])));
    }

    @Override
    public CuCall<Long> importPosixFd(int ordinal, int fd) {
        long[] out = new long[1];
        return holding(ordinal, contexts.with(ordinal, () -> call(CudaNative.memImportPosixFd(ordinal, fd, out),
                out[0])));
    }

    @Override
    public CuCall<Long> addressReserve(int ordinal, long size, long alignment) {
        long[] out = new long[1];
        return contexts.with(ordinal, () -> call(CudaNative.memAddressReserve(ordinal, size, alignment, out), out[0]));
    }

    @Override
    public CuResult addressFree(int ordinal, long ptr, long size) {
        return contexts.with(ordinal, () -> CuResult.of(CudaNative.memAddressFree(ordinal, ptr, size)));
    }

    @Override
    public CuResult map(int ordinal, long ptr, long size, long handle) {
        return contexts.with(ordinal, () -> CuResult.of(CudaNative.memMap(ordinal, ptr, size, handle)));
    }

    @Override
    public CuResult unmap(int ordinal, long ptr, long size) {
        return contexts.with(ordinal, () -> CuResult.of(CudaNative.memUnmap(ordinal, ptr, size)));
    }

    @Override
    public CuResult setAccess(int ordinal, long ptr, long size, int accessOrdinal) {
        return contexts.with(ordinal, () -> CuResult.of(CudaNative.memSetAccess(ordinal, ptr, size, accessOrdinal)));
    }

    @Override
    public CuResult fillPattern(int ordinal, long ptr, long size, long seed) {
        return contexts.with(ordinal, () -> CuResult.of(CudaNative.memFillPattern(ordinal, ptr, size, seed)));
    }

    @Override
    public int patternKernel(int ordinal) {
        return CudaNative.patternKernel(ordinal);
    }

    @Override
    public CuCall<PatternCheck> verifyPattern(int ordinal, long ptr, long size, long seed, long windowOffset,
                                              long windowBytes) {
        long[] out = new long[5];
        return contexts.with(ordinal, () -> {
            int rc = CudaNative.memVerifyPattern(ordinal, ptr, size, seed, windowOffset, windowBytes, out);
            return call(rc, new PatternCheck(out[0], out[1] == 1, out[2], CuResult.of((int) out[3]), out[4] == 1));
        });
    }

    @Override
    public CuCall<Float> copyTimed(int ordinal, long dst, long src, long size, int iterations) {
        float[] out = new float[1];
        return contexts.with(ordinal, () -> call(CudaNative.memcpyDtoDTimed(ordinal, dst, src, size, iterations, out),
                out[0]));
    }

    @Override
    public <T> T withContext(int ordinal, java.util.function.Supplier<T> work) {
        return contexts.with(ordinal, work);
    }

    /** A new allocation keeps its GPU's context until it is released. */
    private <T> CuCall<T> holding(int ordinal, CuCall<T> created) {
        if (created.ok()) {
            contexts.enter(ordinal);
        }
        return created;
    }

    @Override
    public String errorString(CuResult result) {
        return status.cudaLoaded() ? CudaNative.getErrorString(result.code()) : null;
    }

    @Override
    public NvmlCall<String> nvmlDriverVersion() {
        return NvmlNative.driverVersion(status.nvmlLoaded());
    }

    @Override
    public NvmlCall<FabricInfo> fabricInfo(String gpuUuid) {
        return NvmlNative.fabricInfo(status.nvmlLoaded(), gpuUuid);
    }

    @Override
    public NvmlCall<java.util.List<String>> nvmlGpuUuids() {
        return NvmlNative.gpuUuids(status.nvmlLoaded());
    }

    @Override
    public NvmlCall<Integer> computeMode(String gpuUuid) {
        return NvmlNative.computeMode(status.nvmlLoaded(), gpuUuid);
    }

    @Override
    public NvmlCall<int[]> migMode(String gpuUuid) {
        return NvmlNative.migMode(status.nvmlLoaded(), gpuUuid);
    }

    @Override
    public NvmlCall<long[]> nvmlMemory(String gpuUuid) {
        return NvmlNative.memoryInfo(status.nvmlLoaded(), gpuUuid);
    }

    @Override
    public boolean contextHeld(int ordinal) {
        return contexts.held(ordinal);
    }

    @Override
    public void closeFd(int fd) {
        FdPassing.close(fd);
    }

    private static <T> CuCall<T> call(int rc, T value) {
        return rc == 0 ? CuCall.ok(value) : CuCall.failed(CuResult.of(rc));
    }

    @Override
    public String toString() {
        return "JniCudaDriver[" + status.cudaLibrary() + (status.isFake() ? ", fake" : "") + "]";
    }

}
