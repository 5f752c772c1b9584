package dev.imexprobe.cuda;

/** An NVML call's result and, when it succeeded, its value. */
public record NvmlCall<T>(NvmlReturn result, T value) {

    public static <T> NvmlCall<T> ok(T value) {
        return new NvmlCall<>(NvmlReturn.SUCCESS, value);
    }

    public static <T> NvmlCall<T> failed(NvmlReturn result) {
        return new NvmlCall<>(result, null);
    }

    public boolean ok() {
        return result.ok();
    }
}
