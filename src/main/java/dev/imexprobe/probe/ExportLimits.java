package dev.imexprobe.probe;

import java.time.Duration;

/**
 * Caps on what peers can make this agent hold: exports live at most {@code ttl}, at most {@code maxExports}
 * at once, each at most {@code maxBytes}, all together at most {@code totalBytes}.
 */
public record ExportLimits(Duration ttl, int maxExports, long maxBytes, long totalBytes) {

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
