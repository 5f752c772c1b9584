package dev.imexprobe.cuda;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.HexFormat;
import java.util.List;

/**
 * A GPU's NVLink fabric registration as NVML reports it (nvmlGpuFabricInfo v3/v2/legacy), decoded.
 * The raw numbers stay beside their names so nothing is lost when a newer driver adds values.
 *
 * @param structVersion which struct the driver answered with: 3, 2, or 1 for the legacy call
 * @param status        the registration's own nvmlReturn (meaningful once state is COMPLETED)
 * @param clusterUuid   the IMEX/NVLink domain's cluster UUID (all zero when not registered)
 * @param healthMask    the raw health mask; its fields are decoded in {@link #health()}
 */
public record FabricInfo(int structVersion, int state, int status, long cliqueId, String clusterUuid,
                         long healthMask, int healthSummary) {

    public static final int STATE_NOT_SUPPORTED = 0;
    public static final int STATE_NOT_STARTED = 1;
    public static final int STATE_IN_PROGRESS = 2;
    public static final int STATE_COMPLETED = 3;

    private static final List<String> STATES = List.of("NOT_SUPPORTED", "NOT_STARTED", "IN_PROGRESS", "COMPLETED");
    private static final List<String> SUMMARIES = List.of("NOT_SUPPORTED", "HEALTHY", "UNHEALTHY", "LIMITED_CAPACITY");
    private static final List<String> TRI_STATE = List.of("NOT_SUPPORTED", "TRUE", "FALSE");
    private static final List<String> CONFIGURATION = List.of("NOT_SUPPORTED", "NONE", "INCORRECT_SYSGUID",
            "INCORRECT_CHASSIS_SN", "NO_PARTITION", "INSUFFICIENT_NVLINKS");
    /** The mask bits nvml.h of driver 580 defines (four 2-bit fields and one 4-bit field). */
    private static final long KNOWN_HEALTH_BITS = 0xFFFL;
    /** Values as nvml.h numbers them (the names above are for people; the judgments below compare numbers). */
    private static final int TRI_TRUE = 1;
    private static final int CONFIGURATION_NONE = 1;
    private static final int SUMMARY_UNHEALTHY = 2;
    private static final int SUMMARY_LIMITED_CAPACITY = 3;
    private static final int DEGRADED_BW = 0;
    private static final int ROUTE_RECOVERY = 2;
    private static final int ROUTE_UNHEALTHY = 4;
    private static final int ACCESS_TIMEOUT_RECOVERY = 6;
    private static final int INCORRECT_CONFIGURATION = 8;

    public static FabricInfo decode(int[] raw, byte[] clusterUuid16) {
        return new FabricInfo(raw[0], raw[3], raw[1], Integer.toUnsignedLong(raw[2]), uuid(clusterUuid16),
                Integer.toUnsignedLong(raw[4]), raw[5]);
    }

    static String uuid(byte[] b) {
        String hex = HexFormat.of().formatHex(b);
        return hex.substring(0, 8) + "-" + hex.substring(8, 12) + "-" + hex.substring(12, 16) + "-"
                + hex.substring(16, 20) + "-" + hex.substring(20);
    }

    @JsonProperty
    public String stateName() {
        return name(STATES, state);
    }

    @JsonProperty
    public String statusName() {
        return NvmlReturn.of(status).name();
    }

    @JsonProperty
    public String healthSummaryName() {
        return name(SUMMARIES, healthSummary);
    }

    @JsonProperty
    public Health health() {
        return new Health(
                name(TRI_STATE, field(DEGRADED_BW, 0x3)),
                name(TRI_STATE, field(ROUTE_RECOVERY, 0x3)),
                name(TRI_STATE, field(ROUTE_UNHEALTHY, 0x3)),
                name(TRI_STATE, field(ACCESS_TIMEOUT_RECOVERY, 0x3)),
                name(CONFIGURATION, field(INCORRECT_CONFIGURATION, 0xF)),
                healthMask & ~KNOWN_HEALTH_BITS);
    }

    private int field(int shift, int mask) {
        return (int) ((healthMask >> shift) & mask);
    }

    /** Whether a 2-bit field of the mask says TRUE. */
    private boolean flagged(int shift) {
        return field(shift, 0x3) == TRI_TRUE;
    }

    /** Neither NOT_SUPPORTED (0) nor NONE (1): some incorrect configuration, or a value newer than us. */
    private boolean misconfigured() {
        return field(INCORRECT_CONFIGURATION, 0xF) > CONFIGURATION_NONE;
    }

    /** True when the GPU finished joining its fabric. */
    public boolean completed() {
        return state == STATE_COMPLETED;
    }

    /**
     * Healthy when registration completed without error and nothing in the mask or summary says otherwise;
     * false when it says otherwise; null when there is no fabric to judge (state not COMPLETED).
     */
    @JsonProperty
    public Boolean healthy() {
        if (!completed()) {
            return null;
        }
        return status == 0 && healthSummary != SUMMARY_UNHEALTHY && !flagged(ROUTE_UNHEALTHY)
                && !flagged(ACCESS_TIMEOUT_RECOVERY) && !misconfigured();
    }

    /** Bandwidth reduced, capacity limited or routes being recovered: works, but slower or less sure than it should. */
    public boolean degraded() {
        return flagged(DEGRADED_BW) || flagged(ROUTE_RECOVERY) || healthSummary == SUMMARY_LIMITED_CAPACITY;
    }

    /**
     * The mask fields and summary that say something is wrong, named as nvml.h names them
     * (NVML_GPU_FABRIC_HEALTH_MASK_*: DEGRADED_BW bits 0-1, ROUTE_RECOVERY 2-3, ROUTE_UNHEALTHY 4-5,
     * ACCESS_TIMEOUT_RECOVERY 6-7, INCORRECT_CONFIGURATION 8-11), e.g. "DEGRADED_BW, ROUTE_RECOVERY";
     * "none" when nothing does. Findings name these so the operator sees which bit fired.
     */
    public String problems() {
        Health h = health();
        List<String> out = new java.util.ArrayList<>();
        if (flagged(DEGRADED_BW)) {
            out.add("DEGRADED_BW");
        }
        if (flagged(ROUTE_RECOVERY)) {
            out.add("ROUTE_RECOVERY");
        }
        if (flagged(ROUTE_UNHEALTHY)) {
            out.add("ROUTE_UNHEALTHY");
        }
        if (flagged(ACCESS_TIMEOUT_RECOVERY)) {
            out.add("ACCESS_TIMEOUT_RECOVERY");
        }
        if (misconfigured()) {
            out.add("INCORRECT_CONFIGURATION=" + h.incorrectConfiguration());
        }
        if (h.unknownBits() != 0) {
            out.add("UNKNOWN_BITS=0x" + Long.toHexString(h.unknownBits()));
        }
        if (healthSummary == SUMMARY_UNHEALTHY || healthSummary == SUMMARY_LIMITED_CAPACITY) {
            out.add("SUMMARY_" + healthSummaryName());
        }
        if (status != 0) {
            out.add("STATUS_" + statusName());
        }
        return out.isEmpty() ? "none" : String.join(", ", out);
    }

    private static String name(List<String> names, int value) {
        return value >= 0 && value < names.size() ? names.get(value) : "UNKNOWN_" + value;
    }

    /** The health mask's fields, named as in nvml.h. */
    public record Health(String degradedBandwidth, String routeRecovery, String routeUnhealthy,
                         String accessTimeoutRecovery, String incorrectConfiguration, long unknownBits) {
    }
}
