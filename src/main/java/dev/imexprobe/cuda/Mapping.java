package dev.imexprobe.cuda;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A reserved virtual address range, optionally with an allocation mapped into it and access granted. Closing
 * unmaps (when mapped) and frees the range, returning the first failure; a second close does nothing.
 */
public final class Mapping implements AutoCloseable {

    private final CudaDriver driver;
    private final int ordinal;
    private final long ptr;
    private final long size;
    private volatile boolean mapped;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Mapping(CudaDriver driver, int ordinal, long ptr, long size) {
        this.driver = driver;
        this.ordinal = ordinal;
        this.ptr = ptr;
        this.size = size;
        LiveAllocations.acquired(LiveAllocations.Kind.MAPPING);
    }

    /** Reserves {@code size} bytes of virtual address space aligned to {@code alignment}. */
    public static CuCall<Mapping> reserve(CudaDriver driver, int ordinal, long size, long alignment) {
        CuCall<Long> c = driver.addressReserve(ordinal, size, alignment);
        return c.ok() ? CuCall.ok(new Mapping(driver, ordinal, c.value(), size)) : CuCall.failed(c.result());
    }

    public CuResult map(Allocation allocation) {
        CuResult r = driver.map(ordinal, ptr, size, allocation.handle());
        mapped = r.ok();
        return r;
    }

    /** Grants read-write access to the device with {@code accessOrdinal}. */
    public CuResult setAccess(int accessOrdinal) {
        return driver.setAccess(ordinal, ptr, size, accessOrdinal);
    }

    public CuResult fill(long seed) {
        return driver.fillPattern(ordinal, ptr, size, seed);
    }

    /** How the last fill on this GPU wrote the pattern, for a stage's detail ("" when not known). */
    public String fillWay() {
        return kernelWay(" (by the GPU's fill kernel)",
                " (through host memory: the driver could not load the fill kernel, ");
    }

    /** How the last check on this GPU read the pattern, for a stage's detail ("" when not known). */
    public String checkWay() {
        return kernelWay(" (compared on the GPU by the compare kernel)",
                " (copied into host memory by cuMemcpyDtoH and compared there: the driver could not load the compare"
                        + " kernel, ");
    }

    /** The shim loads both pattern kernels together, so one answer says which way a fill and a check went. */
    private String kernelWay(String onGpu, String throughHostBecause) {
        int k = driver.patternKernel(ordinal);
        if (k < 0) {
            return "";
        }
        return k == 0 ? onGpu : throughHostBecause + CuResult.of(k).name() + ")";
    }

    /** Value: offset of the first word that differs from the seed's pattern, or -1. */
    public CuCall<Long> verify(long seed) {
        CuCall<PatternCheck> c = verify(seed, 0, 0);
        return c.ok() ? CuCall.ok(c.value().mismatch()) : CuCall.failed(c.result());
    }

    /**
     * Compares the whole range with the seed's pattern and, where the compare kernel reads it, has a copy engine
     * read {@code windowBytes} at {@code windowOffset} beside it.
     */
    public CuCall<PatternCheck> verify(long seed, long windowOffset, long windowBytes) {
        return driver.verifyPattern(ordinal, ptr, size, seed, windowOffset, windowBytes);
    }

    public long ptr() {
        return ptr;
    }

    public long size() {
        return size;
    }

    public int ordinal() {
        return ordinal;
    }

    /** For try-with-resources; the result is dropped, so probes call {@link #release()} instead. */
    @Override
    public void close() {
        release();
    }

    /** Releases once and returns what the driver said; later calls return SUCCESS without a driver call. */
    public CuResult release() {
        if (!closed.compareAndSet(false, true)) {
            return CuResult.SUCCESS;
        }
        LiveAllocations.released(LiveAllocations.Kind.MAPPING);
        CuResult first = CuResult.SUCCESS;
        if (mapped) {
            first = driver.unmap(ordinal, ptr, size);
            mapped = false;
        }
        CuResult freed = driver.addressFree(ordinal, ptr, size);
        return first.ok() ? freed : first;
    }
}
