import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.DeviceAttribute;
import dev.imexprobe.cuda.DriverStatus;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.NvmlCall;
import dev.imexprobe.cuda.PatternCheck;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.SelfProbe;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Session 2026-12-05 g: the self-probe's stages over a driver that answers at once (no native call): what each stage
 * costs in Java alone, on a driver pool of 1 or 2 threads. Run against the built classes:
 *   java -Dloader.path=DIR -Dloader.main=NullStages -cp target/imexprobe.jar \
 *       org.springframework.boot.loader.launch.PropertiesLauncher N t2,t1
 */
public class NullStages {

    static final class NullDriver implements CudaDriver {
        public DriverStatus status() { throw new UnsupportedOperationException(); }
        public CuResult init() { return CuResult.SUCCESS; }
        public CuCall<Integer> driverVersion() { return CuCall.ok(13000); }
        public CuCall<Integer> deviceCount() { return CuCall.ok(1); }
        public CuCall<String> deviceName(int o) { return CuCall.ok("null"); }
        public CuCall<String> deviceUuid(int o) { return CuCall.ok("GPU-0"); }
        public CuCall<String> pciBusId(int o) { return CuCall.ok("0000:00:00.0"); }
        public CuCall<Integer> attribute(int o, DeviceAttribute a) { return CuCall.ok(1); }
        public CuCall<long[]> memoryInfo(int o) { return CuCall.ok(new long[] {1L << 30, 1L << 30}); }
        public CuCall<Long> granularity(int o, Set<HandleType> t) { return CuCall.ok(2L << 20); }
        public CuCall<Long> memCreate(int o, long size, Set<HandleType> t) { return CuCall.ok(0x1000L); }
        public CuResult memRelease(int o, long h) { return CuResult.SUCCESS; }
        public CuCall<FabricHandle> exportFabric(int o, long h) {
            byte[] b = new byte[FabricHandle.SIZE];
            ThreadLocalRandom.current().nextBytes(b);
            return CuCall.ok(FabricHandle.of(b));
        }
        public CuCall<Integer> exportPosixFd(int o, long h) { return CuCall.ok(3); }
        public CuCall<Long> importFabric(int o, FabricHandle h) { return CuCall.ok(0x2000L); }
        public CuCall<Long> importPosixFd(int o, int fd) { return CuCall.ok(0x2000L); }
        public CuCall<Long> addressReserve(int o, long size, long a) { return CuCall.ok(0x7f0000000000L); }
        public CuResult addressFree(int o, long p, long s) { return CuResult.SUCCESS; }
        public CuResult map(int o, long p, long s, long h) { return CuResult.SUCCESS; }
        public CuResult unmap(int o, long p, long s) { return CuResult.SUCCESS; }
        public CuResult setAccess(int o, long p, long s, int a) { return CuResult.SUCCESS; }
        public CuResult fillPattern(int o, long p, long s, long seed) { return CuResult.SUCCESS; }
        public int patternKernel(int o) { return 0; }
        public CuCall<PatternCheck> verifyPattern(int o, long p, long s, long seed, long wo, long wb) {
            return CuCall.ok(new PatternCheck(-1, wb > 0, -1, wb > 0 ? CuResult.SUCCESS : null, wb > 0));
        }
        public CuCall<Float> copyTimed(int o, long d, long s, long size, int it) { return CuCall.ok(1f); }
        public String errorString(CuResult r) { return r.name(); }
        public NvmlCall<String> nvmlDriverVersion() { throw new UnsupportedOperationException(); }
        public NvmlCall<FabricInfo> fabricInfo(String uuid) { throw new UnsupportedOperationException(); }
        public void closeFd(int fd) { }
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        CudaDriver d = new NullDriver();
        for (String variant : args[1].split(",")) {
            int threads = variant.startsWith("t1") ? 1 : 2;
            try (DriverExecutor ex = new DriverExecutor(threads, Duration.ofSeconds(5))) {
                SelfProbe sp = new SelfProbe(d, new StageEngine(ex));
                for (int i = 0; i < 2000; i++) {
                    sp.run(0, 2 << 20, "n");
                }
                Map<String, double[]> us = new LinkedHashMap<>();
                double[] whole = new double[n];
                int passed = 0;
                for (int i = 0; i < n; i++) {
                    SelfProbe.SelfProbeResult r = sp.run(0, 2 << 20, "n");
                    passed += r.verdict() == Verdict.PASS ? 1 : 0;
                    whole[i] = r.durationSeconds() * 1e6;
                    for (StageResult st : r.stages()) {
                        us.computeIfAbsent(st.name().label(), k -> new double[n])[i] = st.durationSeconds() * 1e6;
                    }
                }
                StringBuilder b = new StringBuilder(variant + ": " + passed + "/" + n + " passed; stage p50/mean us:");
                us.forEach((k, v) -> b.append(String.format(" %s %.2f/%.2f", k, p50(v), mean(v))));
                b.append(String.format("; whole self-probe %.1f/%.1f", p50(whole), mean(whole)));
                System.out.println(b);
            }
        }
    }

    static double p50(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }

    static double mean(double[] v) {
        return Arrays.stream(v).average().orElse(0);
    }
}
