package dev.imexprobe.peer;

import java.time.Instant;

/**
 * How one discovery source is doing, for health details and metrics.
 *
 * @param source              the source's name ({@code static}, {@code dns}, {@code kubernetes})
 * @param lastSuccess         when it last produced a peer set; null if it never has
 * @param lastError           why the most recent failed attempt failed; null if it never failed. Kept after a
 *                            later success, so an operator can still see what went wrong: use {@link #failing()}
 *                            for the current state
 * @param lastErrorAt         when that failure happened; null if it never failed
 * @param consecutiveFailures failed attempts since the last success (0 while healthy)
 * @param peerCount           size of the set it currently serves (the last known good one while failing)
 */
public record DiscoveryStatus(String source, Instant lastSuccess, String lastError, Instant lastErrorAt,
                              int consecutiveFailures, int peerCount) {

    /** True when the latest attempt failed, i.e. the source is serving a possibly stale set. */
    public boolean failing() {
        return consecutiveFailures > 0;
    }
}
