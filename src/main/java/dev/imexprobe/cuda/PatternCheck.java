package dev.imexprobe.cuda;

/**
 * What a check of the pattern found.
 *
 * @param mismatch       byte offset of the first word of the whole range that differs, or -1
 * @param windowRead     whether a copy engine also read a window (only where the compare kernel read the range)
 * @param windowMismatch byte offset of the first word of the window that differs, or -1
 * @param windowResult   the window copy's own result
 * @param windowBeside   whether the copy ran beside the kernel, on a stream of its own (cuMemcpyDtoHAsync), rather
 *                       than after it (cuMemcpyDtoH)
 */
public record PatternCheck(long mismatch, boolean windowRead, long windowMismatch, CuResult windowResult,
                           boolean windowBeside) {

    /** The call that read the window, as the driver names it. */
    public String windowCall() {
        return windowBeside ? "cuMemcpyDtoHAsync, beside the kernel" : "cuMemcpyDtoH";
    }
}
