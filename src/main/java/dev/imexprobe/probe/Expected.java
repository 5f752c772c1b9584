package dev.imexprobe.probe;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long a recurring wait took the last few times (the median of the last {@value #KEPT}), so that a thread
 * that will wait for it can be awake just before it ends instead of being woken after it ended. The median
 * ignores the odd slow one (the first probe of a round creates the GPU's context). Only a hint: a wrong guess
 * costs a little spinning or one wake-up, never a result.
 */
public final class Expected {

    static final int KEPT = 8;
    /** Distinct waits remembered (stage lists × sizes); beyond it the memory starts over. */
    private static final int MAX_KEYS = 256;

    private final Map<Object, Samples> waits = new ConcurrentHashMap<>();

    private static final class Samples {
        private final long[] last = new long[KEPT];
        private int count;

        synchronized void add(long nanos) {
            last[count++ % KEPT] = nanos;
        }

        synchronized long median() {
            int n = Math.min(count, KEPT);
            long[] sorted = Arrays.copyOf(last, n);
            Arrays.sort(sorted);
            return sorted[(n - 1) / 2];
        }
    }

    public void record(Object key, long nanos) {
        if (nanos < 0) {
            return;
        }
        Samples s = waits.get(key);
        if (s == null) {
            if (waits.size() >= MAX_KEYS) {
                waits.clear();
            }
            s = waits.computeIfAbsent(key, k -> new Samples());
        }
        s.add(nanos);
    }

    /** The median of the last waits of this kind, or -1 before the first. */
    public long estimate(Object key) {
        Samples s = waits.get(key);
        return s == null ? -1 : s.median();
    }
}
