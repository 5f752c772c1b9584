package dev.imexprobe.cuda;

import java.util.Map;

/** An NVML result kept as data: the nvmlReturn_t code and its name from nvml.h (driver 580). */
public record NvmlReturn(int code, String name) {

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(0, "NVML_SUCCESS"),
            Map.entry(1, "NVML_ERROR_UNINITIALIZED"),
            Map.entry(2, "NVML_ERROR_INVALID_ARGUMENT"),
            Map.entry(3, "NVML_ERROR_NOT_SUPPORTED"),
            Map.entry(4, "NVML_ERROR_NO_PERMISSION"),
            Map.entry(5, "NVML_ERROR_ALREADY_INITIALIZED"),
            Map.entry(6, "NVML_ERROR_NOT_FOUND"),
            Map.entry(7, "NVML_ERROR_INSUFFICIENT_SIZE"),
            Map.entry(8, "NVML_ERROR_INSUFFICIENT_POWER"),
            Map.entry(9, "NVML_ERROR_DRIVER_NOT_LOADED"),
            Map.entry(10, "NVML_ERROR_TIMEOUT"),
            Map.entry(11, "NVML_ERROR_IRQ_ISSUE"),
            Map.entry(12, "NVML_ERROR_LIBRARY_NOT_FOUND"),
            Map.entry(13, "NVML_ERROR_FUNCTION_NOT_FOUND"),
            Map.entry(14, "NVML_ERROR_CORRUPTED_INFOROM"),
            Map.entry(15, "NVML_ERROR_GPU_IS_LOST"),
            Map.entry(16, "NVML_ERROR_RESET_REQUIRED"),
            Map.entry(17, "NVML_ERROR_OPERATING_SYSTEM"),
            Map.entry(18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"),
            Map.entry(19, "NVML_ERROR_IN_USE"),
            Map.entry(20, "NVML_ERROR_MEMORY"),
            Map.entry(21, "NVML_ERROR_NO_DATA"),
            Map.entry(22, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED"),
            Map.entry(23, "NVML_ERROR_INSUFFICIENT_RESOURCES"),
            Map.entry(24, "NVML_ERROR_FREQ_NOT_SUPPORTED"),
            Map.entry(25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"),
            Map.entry(26, "NVML_ERROR_DEPRECATED"),
            Map.entry(27, "NVML_ERROR_NOT_READY"),
            Map.entry(28, "NVML_ERROR_GPU_NOT_FOUND"),
            Map.entry(29, "NVML_ERROR_INVALID_STATE"),
            Map.entry(999, "NVML_ERROR_UNKNOWN"));

    // After NAMES: static fields initialise in order.
    public static final NvmlReturn SUCCESS = of(0);
    public static final NvmlReturn NOT_SUPPORTED = of(3);
    public static final NvmlReturn LIBRARY_NOT_FOUND = of(12);

    public static NvmlReturn of(int code) {
        String name = NAMES.get(code);
        return new NvmlReturn(code, name != null ? name : "NVML_ERROR_UNRECOGNIZED_" + code);
    }

    public boolean ok() {
        return code == 0;
    }
}
