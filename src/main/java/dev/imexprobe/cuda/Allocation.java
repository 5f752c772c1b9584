package dev.imexprobe.cuda;

import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A physical allocation handle this process holds: one it created (cuMemCreate) or one it imported. Releasing it
 * calls cuMemRelease once.
 */
public final class Allocation implements AutoCloseable {

    private final CudaDriver driver;
    private final int ordinal;
    private final long handle;
    private final long size;
    private final LiveAllocations.Kind kind;
    private final AtomicBoolean released = new AtomicBoolean();

    private Allocation(CudaDriver driver, int ordinal, long handle, long size, LiveAllocations.Kind kind) {
        this.driver = driver;
        this.ordinal = ordinal;
        this.handle = handle;
        this.size = size;
        this.kind = kind;
        LiveAllocations.acquired(kind);
    }

    public static CuCall<Allocation> create(CudaDriver driver, int ordinal, long size, Set<HandleType> types) {
        CuCall<Long> c = driver.memCreate(ordinal, size, types);
        return c.ok() ? CuCall.ok(new Allocation(driver, ordinal, c.value(), size, LiveAllocations.Kind.CREATED))
                : CuCall.failed(c.result());
    }

    public static CuCall<Allocation> importFabric(CudaDriver driver, int ordinal, FabricHandle handle, long size) {
        CuCall<Long> c = driver.importFabric(ordinal, handle);
        return c.ok() ? CuCall.ok(new Allocation(driver, ordinal, c.value(), size, LiveAllocations.Kind.IMPORTED))
                : CuCall.failed(c.result());
    }

    public static CuCall<Allocation> importPosixFd(CudaDriver driver, int ordinal, int fd, long size) {
        CuCall<Long> c = driver.importPosixFd(ordinal, fd);
        return c.ok() ? CuCall.ok(new Allocation(driver, ordinal, c.value(), size, LiveAllocations.Kind.IMPORTED))
                : CuCall.failed(c.result());
    }

    public CuCall<FabricHandle> exportFabric() {
        return driver.exportFabric(ordinal, handle);
    }

    /** The caller owns the descriptor and closes it once it has been sent. */
    public CuCall<Integer> exportPosixFd() {
        return driver.exportPosixFd(ordinal, handle);
    }

    public int ordinal() {
        return ordinal;
    }

    public long handle() {
        return handle;
    }

    public long size() {
        return size;
    }

    public boolean imported() {
        return kind == LiveAllocations.Kind.IMPORTED;
    }

    /** For try-with-resources; the result is dropped, so probes call {@link #release()} instead. */
    @Override
    public void close() {
        release();
    }

    /** Releases once and returns what the driver said; later calls return SUCCESS without a driver call. */
    public CuResult release() {
        if (!released.compareAndSet(false, true)) {
            return CuResult.SUCCESS;
        }
        // Counted as released whatever the driver answers: a failed release is reported, not retried forever.
        LiveAllocations.released(kind);
        return driver.memRelease(ordinal, handle);
    }
}
