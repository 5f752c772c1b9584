package dev.imexprobe.bench;

import java.util.HashMap;
import java.util.Map;

/**
 * CPU seconds per thread over a window, threads that start or end inside it included. Two readings of /proc lose a
 * thread that ended between them: on an H100 the scale window's unnamed rest was 0.27–0.41 s of its 0.8–2 s, most of
 * it the JIT's compiler threads, which the JVM starts and stops as its queue grows and shrinks (docs/performance.md,
 * "Session 2026-12-06 l"). Readings taken during the window keep each thread's last value, so only a thread that
 * lives and ends between two of them, and a thread's CPU after its last reading, go unnamed.
 */
final class ThreadLedger {

    /** One thread's kernel name and CPU seconds (user + system) at a reading. */
    record Reading(String name, double seconds) {
    }

    /** Added to the name of a thread that had ended by the window's end. */
    static final String ENDED = " (ended)";

    private final Map<Integer, Reading> first;
    private final Map<Integer, Reading> last = new HashMap<>();

    /** Starts the window at a reading, by thread id. */
    ThreadLedger(Map<Integer, Reading> atStart) {
        first = Map.copyOf(atStart);
        last.putAll(atStart);
    }

    /** A reading during the window. */
    void sample(Map<Integer, Reading> now) {
        last.putAll(now);
    }

    /**
     * Ends the window: CPU seconds by thread name with digits dropped (a pool's threads count together), threads born
     * in the window from zero, threads gone by {@code atEnd} under their name plus {@link #ENDED}.
     */
    Map<String, Double> byName(Map<Integer, Reading> atEnd) {
        sample(atEnd);
        Map<String, Double> byName = new HashMap<>();
        for (Map.Entry<Integer, Reading> e : last.entrySet()) {
            Reading start = first.get(e.getKey());
            double delta = e.getValue().seconds() - (start == null ? 0 : start.seconds());
            String name = e.getValue().name().replaceAll("[0-9]+", "#")
                    + (atEnd.containsKey(e.getKey()) ? "" : ENDED);
            byName.merge(name, delta, Double::sum);
        }
        return byName;
    }
}
