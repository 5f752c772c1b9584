package dev.imexprobe.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Percentiles of a sample, nearest rank (the same rule as bench/driver_floor.c), in whatever unit the samples
 * carry (milliseconds throughout the bench).
 */
record Stats(int n, double p50, double p99, double mean, double min, double max) {

    static Stats of(double[] samples) {
        if (samples.length == 0) {
            return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        double[] s = samples.clone();
        Arrays.sort(s);
        double sum = 0;
        for (double v : s) {
            sum += v;
        }
        return new Stats(s.length, rank(s, 0.5), rank(s, 0.99), sum / s.length, s[0], s[s.length - 1]);
    }

    static double rank(double[] sorted, double q) {
        int r = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(1, Math.min(sorted.length, r)) - 1];
    }

    static double median(double[] samples) {
        return of(samples).p50();
    }

    Map<String, Object> figures() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", n);
        m.put("p50", round(p50));
        m.put("p99", round(p99));
        m.put("mean", round(mean));
        m.put("min", round(min));
        m.put("max", round(max));
        return m;
    }

    static double round(double v) {
        return Double.isFinite(v) ? Math.round(v * 1e4) / 1e4 : v;
    }
}
