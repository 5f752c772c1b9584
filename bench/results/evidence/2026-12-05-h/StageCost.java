import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.JniCudaDriver;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.SelfProbe;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Session 2026-12-05 g: the self-probe's stages (as `check --repeat`) in a loop, with a driver pool of 1 or 2
 * threads, and optionally every CudaDriver call timed through a proxy: what of a stage's time is the driver calls
 * and what is the Java around them. Built against the bundle's jar; run:
 *   $J -cp imexprobe.jar-classes:. StageCost N t2,t1,t2p,t1p
 */
public class StageCost {

    static final Map<String, long[]> CALLS = new TreeMap<>();
    static final ThreadLocal<int[]> SEQ = ThreadLocal.withInitial(() -> new int[1]);

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        JniCudaDriver real = JniCudaDriver.get();
        System.out.println("init " + real.init());
        CudaDriver timed = (CudaDriver) Proxy.newProxyInstance(StageCost.class.getClassLoader(),
                new Class<?>[] {CudaDriver.class}, (p, m, a) -> {
                    long t0 = System.nanoTime();
                    try {
                        return m.invoke(real, a);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        long d = System.nanoTime() - t0;
                        // the self-probe's calls come in a fixed order from memCreate on: number them
                        int[] seq = SEQ.get();
                        if (m.getName().equals("memCreate")) {
                            seq[0] = 0;
                        }
                        String key = String.format("%02d %s", seq[0]++, m.getName());
                        synchronized (CALLS) {
                            long[] c = CALLS.computeIfAbsent(key, k -> new long[2]);
                            c[0]++;
                            c[1] += d;
                        }
                    }
                });
        for (String variant : args[1].split(",")) {
            int threads = variant.startsWith("t1") ? 1 : 2;
            boolean proxy = variant.endsWith("p");
            CudaDriver d = proxy ? timed : real;
            try (DriverExecutor ex = new DriverExecutor(threads, Duration.ofSeconds(5))) {
                SelfProbe sp = new SelfProbe(d, new StageEngine(ex));
                Map<String, double[]> us = real.withContext(0, () -> {
                    for (int i = 0; i < 200; i++) {
                        sp.run(0, 2 << 20, "n");
                    }
                    synchronized (CALLS) {
                        CALLS.clear();
                    }
                    Map<String, double[]> s = new LinkedHashMap<>();
                    int passed = 0;
                    for (int i = 0; i < n; i++) {
                        SelfProbe.SelfProbeResult r = sp.run(0, 2 << 20, "n");
                        passed += r.verdict() == Verdict.PASS ? 1 : 0;
                        for (StageResult st : r.stages()) {
                            s.computeIfAbsent(st.name().label(), k -> new double[n])[i] = st.durationSeconds() * 1e6;
                        }
                    }
                    System.out.println("variant " + variant + ": " + passed + "/" + n + " passed");
                    return s;
                });
                StringBuilder b = new StringBuilder("  stage p50/mean us:");
                us.forEach((k, v) -> {
                    double[] c = v.clone();
                    Arrays.sort(c);
                    b.append(String.format(" %s %.1f/%.1f", k, c[n / 2], Arrays.stream(c).average().orElse(0)));
                });
                System.out.println(b);
                if (proxy) {
                    StringBuilder m = new StringBuilder("  calls in order, mean us (per probe):");
                    synchronized (CALLS) {
                        CALLS.forEach((k, c) -> m.append(String.format("%n    %s %.1f (%.2f)", k, c[1] / 1e3 / c[0],
                                c[0] / (double) n)));
                    }
                    System.out.println(m);
                }
            }
        }
    }
}
