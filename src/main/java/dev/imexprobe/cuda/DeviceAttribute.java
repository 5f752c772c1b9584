package dev.imexprobe.cuda;

/** The CUdevice_attribute values we read (numbers from cuda.h, checked by native/test/abi_check). */
public enum DeviceAttribute {
    VIRTUAL_MEMORY_MANAGEMENT(102),
    POSIX_FILE_DESCRIPTOR(103),
    GPU_DIRECT_RDMA_WITH_CUDA_VMM(110),
    FABRIC(128),
    /** Read only: nothing in imexprobe calls a multicast entry point. */
    MULTICAST(132),
    COMPUTE_CAPABILITY_MAJOR(75),
    COMPUTE_CAPABILITY_MINOR(76);

    private final int code;

    DeviceAttribute(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
