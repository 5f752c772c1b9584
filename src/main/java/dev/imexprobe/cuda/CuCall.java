package dev.imexprobe.cuda;

/** A driver call's result and, when it succeeded, its value. */
public record CuCall<T>(CuResult result, T value) {

    public static <T> CuCall<T> ok(T value) {
        return new CuCall<>(CuResult.SUCCESS, value);
    }

    public static <T> CuCall<T> failed(CuResult result) {
        return new CuCall<>(result, null);
    }

    public boolean ok() {
        return result.ok();
    }
}
