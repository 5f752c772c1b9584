package dev.imexprobe.node;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each GPU has shown its current NVML fabric state, as this agent saw it. Joining a fabric passes through
 * NOT_STARTED and IN_PROGRESS for a while after boot or a fabric manager restart; only a state that stays beyond
 * {@link #stuckAfter()} is a fault (a GPU stuck IN_PROGRESS: NVSentinel's FM_REGISTRATION_STUCK, its issue #889).
 * The clock starts when the agent first sees the state, so a one-shot {@code check} has none.
 */
public final class FabricJoinClock {

    /** Long enough for a fabric manager to register a rack after boot; NVSentinel waits ~90 s plus a boot grace. */
    public static final Duration DEFAULT_STUCK_AFTER = Duration.ofMinutes(5);

    private record Seen(int state, Instant since) {
    }

    private final Map<String, Seen> seen = new ConcurrentHashMap<>();
    private final Duration stuckAfter;
    private final Clock clock;

    public FabricJoinClock(Duration stuckAfter, Clock clock) {
        if (stuckAfter == null || stuckAfter.isNegative()) {
            throw new IllegalArgumentException("imexprobe.node.fabric-stuck-after must be zero or positive, got "
                    + stuckAfter);
        }
        this.stuckAfter = stuckAfter;
        this.clock = clock;
    }

    public Duration stuckAfter() {
        return stuckAfter;
    }

    /** Records that {@code gpu} shows {@code state} now; returns how long it has shown it without a change. */
    public Duration observe(String gpu, int state) {
        Instant now = clock.instant();
        Seen s = seen.compute(gpu, (k, old) -> old != null && old.state() == state ? old : new Seen(state, now));
        return Duration.between(s.since(), now);
    }

    /** Whether a state held for {@code held} counts as stuck. */
    public boolean stuck(Duration held) {
        return held.compareTo(stuckAfter) >= 0;
    }
}
