package dev.imexprobe.probe;

import java.time.Duration;

/**
 * Caps on what peers can make this agent hold: exports live at most {@code ttl}, at most {@code maxExports}
 * at once, each at most {@code maxBytes}, all together at most {@code totalBytes}. A quarter of the slots
 * ({@link #reservedForProbes()}) is kept for probes: manual exports, which live their whole TTL, cannot take them,
 * so an operator's 64 exports never starve the mesh or /probe.
 */
public record ExportLimits(Duration ttl, int maxExports, long maxBytes, long totalBytes) {

    /** Slots manual exports (POST /v1/exports without the agents' marker) cannot take. */
    public int reservedForProbes() {
        return maxExports / 4;
    }

    public static final ExportLimits DEFAULTS = new ExportLimits(Duration.ofSeconds(60), 64, 1L << 30, 4L << 30);

    public ExportLimits {
        if (ttl == null || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("export TTL must be positive");
        }
        if (maxExports < 1 || maxBytes < 1 || totalBytes < maxBytes) {
            throw new IllegalArgumentException("export caps must be positive and the total at least one export's "
                    + "size (maxExports=" + maxExports + ", maxBytes=" + maxBytes + ", totalBytes=" + totalBytes + ")");
        }
    }
}
