package dev.imexprobe.cuda;

import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A CUDA driver result, kept as data: the numeric code and its name from cuda.h. The table below holds every
 * code of the CUresult enum of CUDA 13.0 ({@code CuResultTableTest} checks it against the installed cuda.h);
 * a code newer than this table keeps its number and gets a name saying so.
 */
public record CuResult(int code, String name) {

    public static final CuResult SUCCESS = of(0);
    public static final CuResult INVALID_VALUE = of(1);
    public static final CuResult OUT_OF_MEMORY = of(2);
    public static final CuResult NOT_INITIALIZED = of(3);
    public static final CuResult NO_DEVICE = of(100);
    public static final CuResult INVALID_DEVICE = of(101);
    public static final CuResult INVALID_HANDLE = of(400);
    public static final CuResult ILLEGAL_STATE = of(401);
    public static final CuResult NOT_READY = of(600);
    public static final CuResult ILLEGAL_ADDRESS = of(700);
    public static final CuResult NOT_PERMITTED = of(800);
    public static final CuResult NOT_SUPPORTED = of(801);
    public static final CuResult UNKNOWN = of(999);

    public CuResult {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a CuResult needs a name");
        }
    }

    /** The result for a code: its cuda.h name, or {@code CUDA_ERROR_UNRECOGNIZED_<code>} for a code newer than CUDA 13.0. */
    public static CuResult of(int code) {
        String name = Table.NAMES.get(code);
        return new CuResult(code, name != null ? name : "CUDA_ERROR_UNRECOGNIZED_" + code);
    }

    /** Every code this build knows, by number. */
    public static Map<Integer, String> table() {
        return Table.NAMES;
    }

    public boolean ok() {
        return code == 0;
    }

    @Override
    public String toString() {
        return name + " (" + code + ")";
    }

    private static final class Table {
        // Generated from cuda.h (CUDA 13.0, enum cudaError_enum); keep in sync via CuResultTableTest.
        static final Map<Integer, String> NAMES = Stream.of(
            entry(0, "CUDA_SUCCESS"),
            entry(1, "CUDA_ERROR_INVALID_VALUE"),
            entry(2, "CUDA_ERROR_OUT_OF_MEMORY"),
            entry(3, "CUDA_ERROR_NOT_INITIALIZED"),
            entry(4, "CUDA_ERROR_DEINITIALIZED"),
            entry(5, "CUDA_ERROR_PROFILER_DISABLED"),
            entry(6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED"),
            entry(7, "CUDA_ERROR_PROFILER_ALREADY_STARTED"),
            entry(8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED"),
            entry(34, "CUDA_ERROR_STUB_LIBRARY"),
            entry(36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"),
            entry(46, "CUDA_ERROR_DEVICE_UNAVAILABLE"),
            entry(100, "CUDA_ERROR_NO_DEVICE"),
            entry(101, "CUDA_ERROR_INVALID_DEVICE"),
            entry(102, "CUDA_ERROR_DEVICE_NOT_LICENSED"),
            entry(200, "CUDA_ERROR_INVALID_IMAGE"),
            entry(201, "CUDA_ERROR_INVALID_CONTEXT"),
            entry(202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"),
            entry(205, "CUDA_ERROR_MAP_FAILED"),
            entry(206, "CUDA_ERROR_UNMAP_FAILED"),
            entry(207, "CUDA_ERROR_ARRAY_IS_MAPPED"),
            entry(208, "CUDA_ERROR_ALREADY_MAPPED"),
            entry(209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
            entry(210, "CUDA_ERROR_ALREADY_ACQUIRED"),
            entry(211, "CUDA_ERROR_NOT_MAPPED"),
            entry(212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"),
            entry(213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"),
            entry(214, "CUDA_ERROR_ECC_UNCORRECTABLE"),
            entry(215, "CUDA_ERROR_UNSUPPORTED_LIMIT"),
            entry(216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"),
            entry(217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"),
            entry(218, "CUDA_ERROR_INVALID_PTX"),
            entry(219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"),
            entry(220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"),
            entry(221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"),
            entry(222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
            entry(223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"),
            entry(224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"),
            entry(225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"),
            entry(226, "CUDA_ERROR_CONTAINED"),
            entry(300, "CUDA_ERROR_INVALID_SOURCE"),
            entry(301, "CUDA_ERROR_FILE_NOT_FOUND"),
            entry(302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"),
            entry(303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"),
            entry(304, "CUDA_ERROR_OPERATING_SYSTEM"),
            entry(400, "CUDA_ERROR_INVALID_HANDLE"),
            entry(401, "CUDA_ERROR_ILLEGAL_STATE"),
            entry(402, "CUDA_ERROR_LOSSY_QUERY"),
            entry(500, "CUDA_ERROR_NOT_FOUND"),
            entry(600, "CUDA_ERROR_NOT_READY"),
            entry(700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
            entry(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
            entry(702, "CUDA_ERROR_LAUNCH_TIMEOUT"),
            entry(703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"),
            entry(704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"),
            entry(705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"),
            entry(708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"),
            entry(709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"),
            entry(710, "CUDA_ERROR_ASSERT"),
            entry(711, "CUDA_ERROR_TOO_MANY_PEERS"),
            entry(712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
            entry(713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"),
            entry(714, "CUDA_ERROR_HARDWARE_STACK_ERROR"),
            entry(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
            entry(716, "CUDA_ERROR_MISALIGNED_ADDRESS"),
            entry(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"),
            entry(718, "CUDA_ERROR_INVALID_PC"),
            entry(719, "CUDA_ERROR_LAUNCH_FAILED"),
            entry(720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
            entry(721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"),
            entry(800, "CUDA_ERROR_NOT_PERMITTED"),
            entry(801, "CUDA_ERROR_NOT_SUPPORTED"),
            entry(802, "CUDA_ERROR_SYSTEM_NOT_READY"),
            entry(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
            entry(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
            entry(805, "CUDA_ERROR_MPS_CONNECTION_FAILED"),
            entry(806, "CUDA_ERROR_MPS_RPC_FAILURE"),
            entry(807, "CUDA_ERROR_MPS_SERVER_NOT_READY"),
            entry(808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED"),
            entry(809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED"),
            entry(810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"),
            entry(811, "CUDA_ERROR_CDP_NOT_SUPPORTED"),
            entry(812, "CUDA_ERROR_CDP_VERSION_MISMATCH"),
            entry(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"),
            entry(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"),
            entry(902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"),
            entry(903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"),
            entry(904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"),
            entry(905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"),
            entry(906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"),
            entry(907, "CUDA_ERROR_CAPTURED_EVENT"),
            entry(908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"),
            entry(909, "CUDA_ERROR_TIMEOUT"),
            entry(910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"),
            entry(911, "CUDA_ERROR_EXTERNAL_DEVICE"),
            entry(912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"),
            entry(913, "CUDA_ERROR_FUNCTION_NOT_LOADED"),
            entry(914, "CUDA_ERROR_INVALID_RESOURCE_TYPE"),
            entry(915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"),
            entry(916, "CUDA_ERROR_KEY_ROTATION"),
            entry(999, "CUDA_ERROR_UNKNOWN")
        ).collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));

        private static Map.Entry<Integer, String> entry(int code, String name) {
            return Map.entry(code, name);
        }
    }
}
