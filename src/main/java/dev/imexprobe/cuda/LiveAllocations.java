package dev.imexprobe.cuda;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many driver resources this process holds right now, by kind. Incremented when the driver hands one out
 * and decremented when it is released, so a leak shows as a number that never returns to zero.
 */
public final class LiveAllocations {

    public enum Kind {
        /** cuMemCreate handles (our exports and self-probes). */
        CREATED,
        /** cuMemImportFromShareableHandle handles. */
        IMPORTED,
        /** reserved virtual address ranges (mapped or not). */
        MAPPING
    }

    private static final Map<Kind, AtomicLong> COUNTS = new EnumMap<>(Kind.class);

    static {
        for (Kind k : Kind.values()) {
            COUNTS.put(k, new AtomicLong());
        }
    }

    private LiveAllocations() {
    }

    static void acquired(Kind kind) {
        COUNTS.get(kind).incrementAndGet();
    }

    static void released(Kind kind) {
        COUNTS.get(kind).decrementAndGet();
    }

    public static long count(Kind kind) {
        return COUNTS.get(kind).get();
    }

    public static long total() {
        return COUNTS.values().stream().mapToLong(AtomicLong::get).sum();
    }
}
