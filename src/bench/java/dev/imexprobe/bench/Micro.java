package dev.imexprobe.bench;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.NodeInspectorSettings;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeReporter;
import dev.imexprobe.peer.AgentSignature;
import dev.imexprobe.probe.AccessStage;
import dev.imexprobe.probe.CreateStage;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.ExportStage;
import dev.imexprobe.probe.ImportStage;
import dev.imexprobe.probe.MapStage;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeReport;
import dev.imexprobe.probe.ProbeSession;
import dev.imexprobe.probe.ProbeStage;
import dev.imexprobe.probe.ReleaseStage;
import dev.imexprobe.probe.ReserveStage;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageOutcome;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;
import dev.imexprobe.probe.VerifyStage;
import dev.imexprobe.probe.WritebackStage;

import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.metrics.ImexprobeMetrics;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Targeted micro-measurements in this JVM, each the median over batches after a warm-up (hand-rolled, not JMH:
 * it has to run from the jar on the GPU host, which has no build tools): one hop onto the bounded driver pool
 * and back, one JNI call, the JSON of each document a push probe moves, the request signature, and building
 * the node report. Microseconds per operation.
 */
final class Micro {

    private final CudaDriver driver;
    private final JsonMapper json;
    private final boolean quick;

    Micro(CudaDriver driver, JsonMapper json, boolean quick) {
        this.driver = driver;
        this.json = json;
        this.quick = quick;
    }

    interface Op {
        Object run() throws Exception;
    }

    /** Median microseconds per call of {@code op}. */
    double time(Op op, int perBatch) throws Exception {
        int batches = quick ? 5 : 60;
        Object sink = null;
        for (int i = 0; i < perBatch * (quick ? 2 : 20); i++) {
            sink = op.run();
        }
        double[] us = new double[batches];
        for (int b = 0; b < batches; b++) {
            long t = System.nanoTime();
            for (int i = 0; i < perBatch; i++) {
                sink = op.run();
            }
            us[b] = (System.nanoTime() - t) / 1e3 / perBatch;
        }
        if (sink == this) {
            System.out.print("");
        }
        return Stats.round(Stats.median(us));
    }

    Map<String, Object> run() throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        try (DriverExecutor pool = new DriverExecutor(16, Duration.ofSeconds(5))) {
            m.put("driverPoolHopUs", time(() -> pool.run(() -> 1, null), 200));
        }
        m.put("handOff", handOff());
        m.put("jniCallUs", time(driver::driverVersion, 2000));
        m.put("importerStages", importerHops());
        byte[] body = json.writeValueAsBytes(Payloads.importBody(Payloads.randomHandle(), Payloads.SIZE,
                Payloads.uuid(1), 123456789L, 987654321L, "bench-a", Payloads.uuid(0)));
        ImportReply reply = Payloads.importReply("bench-b", "0123456789abcdef", Payloads.uuid(1));
        byte[] replyBytes = json.writeValueAsBytes(reply);
        ProbeReport probe = probeReport(reply);
        byte[] probeBytes = json.writeValueAsBytes(probe);
        NodeReport node = new NodeReporter(driver, NodeInspectorSettings.defaults(), AgentIdentity.create("bench"))
                .report();
        byte[] nodeBytes = json.writeValueAsBytes(node);
        m.put("importBodyBytes", body.length);
        m.put("importReplyBytes", replyBytes.length);
        m.put("probeReportBytes", probeBytes.length);
        m.put("nodeReportBytes", nodeBytes.length);
        Map<String, Object> js = new LinkedHashMap<>();
        js.put("importBodyWriteUs", time(() -> json.writeValueAsBytes(Payloads.importBody(Payloads.randomHandle(),
                Payloads.SIZE, Payloads.uuid(1), 1L, 2L, "bench-a", Payloads.uuid(0))), 200));
        // Into the record, as the importer reads it (Wire.read, without its Bean Validation).
        js.put("importBodyReadUs", time(() -> json.readValue(body, ImportRequest.class), 200));
        js.put("importReplyWriteUs", time(() -> json.writeValueAsBytes(reply), 200));
        js.put("importReplyReadUs", time(() -> json.readValue(replyBytes, ImportReply.class), 200));
        js.put("probeReportWriteUs", time(() -> json.writeValueAsBytes(probe), 200));
        js.put("nodeReportWriteUs", time(() -> json.writeValueAsBytes(node), 100));
        js.put("nodeReportReadUs", time(() -> json.readValue(nodeBytes, JsonNode.class), 100));
        m.put("json", js);
        AgentSignature sig = new AgentSignature("bench-token-0123456789abcdef", Clock.systemUTC());
        String header = sig.sign("POST", "/v1/imports", body);
        m.put("hmacSignUs", time(() -> sig.sign("POST", "/v1/imports", body), 500));
        m.put("hmacVerifyUs", time(() -> sig.verify(header, "POST", "/v1/imports", body), 500));
        NodeReporter reporter = new NodeReporter(driver, NodeInspectorSettings.defaults(), AgentIdentity.create("bench"));
        m.put("nodeReportBuildUs", time(reporter::report, 5));
        m.put("metrics", metrics(node, probe.results().getFirst()));
        return m;
    }

    /**
     * One stage list handed to the driver pool and its result handed back, as a probe's side does it, with
     * {@code imexprobe.driver.spin} 0 (park and be woken, both ways) and 100 µs (the worker announced when the
     * request arrives, the caller awake near the list's expected end): the caller works 150 µs (its request) after
     * the announcement, the list busy-waits 300 µs (a driver call), 2 ms idle between exchanges (threads park as
     * between probes). Overhead = wall time of the hand-off minus the 300 µs; CPU = the process's CPU per
     * exchange minus the 450 µs both busy parts take. Medians and p90 in µs.
     */
    private Map<String, Object> handOff() {
        Map<String, Object> m = new LinkedHashMap<>();
        int n = quick ? 200 : 2000;
        ProbeStage busy = new ProbeStage() {
            @Override
            public Stage stage() {
                return Stage.IMPORT;
            }

            @Override
            public StageOutcome run(ProbeSession s) {
                spinFor(300_000);
                return StageOutcome.skipped("busy");
            }
        };
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        for (long spin : new long[] {0, 100_000}) {
            try (DriverExecutor pool = new DriverExecutor(16, Duration.ofSeconds(5), Duration.ofNanos(spin))) {
                dev.imexprobe.probe.StageEngine engine = new dev.imexprobe.probe.StageEngine(pool);
                ProbeSession session = new ProbeSession(driver, HandleType.FABRIC, Payloads.SIZE, 1L, null, 0, -1);
                List<ProbeStage> list = List.of(busy);
                double[] over = new double[n];
                long cpu = 0;
                for (int i = -n / 5; i < n; i++) {
                    java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
                    long c0 = os.getProcessCpuTime();
                    pool.expect(pool.spinNanos());
                    spinFor(150_000);
                    long t = System.nanoTime();
                    engine.run(session, list);
                    long wall = System.nanoTime() - t;
                    if (i >= 0) {
                        over[i] = (wall - 300_000) / 1e3;
                        cpu += os.getProcessCpuTime() - c0;
                    }
                }
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("overheadP50Us", Stats.round(Stats.median(over)));
                java.util.Arrays.sort(over);
                r.put("overheadP90Us", Stats.round(over[(int) (n * 0.9)]));
                r.put("cpuOverheadUs", Stats.round(cpu / 1e3 / n - 450));
                r.put("spinInEffectUs", pool.spinNanos() / 1000); // 0 when the host has no CPU to spare
                m.put("spin" + spin / 1000 + "us", r);
            }
        }
        return m;
    }

    private static void spinFor(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /**
     * The importer's seven stages with real driver calls on a real (or fake) export of this process, run two
     * ways, alternately: each stage its own task on the driver pool (one hop there and back per stage), and all
     * seven as one task. The difference is what the hops cost; median milliseconds per import.
     */
    private Map<String, Object> importerHops() throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        List<ProbeStage> stages = List.of(new ImportStage(), new ReserveStage(), new MapStage(), new AccessStage(),
                new VerifyStage(), new WritebackStage(WritebackStage.Side.WRITE), new ReleaseStage());
        ProbeSession exporter = new ProbeSession(driver, HandleType.FABRIC, Payloads.SIZE, 42L, null, 0, -1);
        try (DriverExecutor pool = new DriverExecutor(16, Duration.ofSeconds(5))) {
            for (ProbeStage s : List.of(new CreateStage(), new ExportStage())) {
                StageOutcome o = s.run(exporter);
                if (!o.ok()) {
                    m.put("skipped", "the export for it failed: " + o.detail());
                    return m;
                }
            }
            int n = quick ? 10 : 200;
            double[] perStage = new double[n];
            double[] oneHop = new double[n];
            for (int i = -n / 10; i < n; i++) {
                for (int way = 0; way < 2; way++) {
                    boolean each = (way == 0) == (i % 2 == 0);
                    ProbeSession s = ProbeSession.forImport(driver, exporter.fabricHandle(), Payloads.SIZE, 0, 42L, 43L);
                    long t = System.nanoTime();
                    if (each) {
                        for (ProbeStage stage : stages) {
                            pool.run(() -> stage.run(s), null);
                        }
                    } else {
                        pool.run(() -> {
                            stages.forEach(stage -> stage.run(s));
                            return null;
                        }, null);
                    }
                    double ms = (System.nanoTime() - t) / 1e6;
                    if (i >= 0) {
                        (each ? perStage : oneHop)[i] = ms;
                    }
                }
            }
            m.put("iterations", n);
            m.put("oneHopPerStageMs", Stats.round(Stats.median(perStage)));
            m.put("oneHopForAllMs", Stats.round(Stats.median(oneHop)));
            m.put("savedMs", Stats.round(Stats.median(perStage) - Stats.median(oneHop)));
        } finally {
            new ReleaseStage().run(exporter);
        }
        return m;
    }

    /**
     * The agent's metrics for 71 pairs in this JVM (no HTTP), as the chart ships them (pair gauges and probe
     * counters; stage series without pair labels) and with {@code imexprobe.metrics.pairs=true} (stage counters
     * and histograms per pair): what recording one result costs (the mesh records 71 per interval), what
     * rendering /actuator/prometheus costs, and how many scrapes failed while results were being recorded from
     * another thread, as happens in a running agent.
     */
    private Map<String, Object> metrics(NodeReport node, PairResult template) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("default", metrics(node, template, false));
        m.put("pairLabels", metrics(node, template, true));
        return m;
    }

    private Map<String, Object> metrics(NodeReport node, PairResult template, boolean pairLabels) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        MeshState mesh = new MeshState(Clock.systemUTC());
        ProbeRecorder recorder = new ProbeRecorder(mesh);
        ImexprobeMetrics metrics = new ImexprobeMetrics(() -> node, mesh, () -> 71, () -> 0, pairLabels, "bench");
        metrics.bindTo(registry);
        recorder.addListener(metrics);
        List<PairResult> pairs = new ArrayList<>();
        for (int i = 1; i <= 71; i++) {
            pairs.add(new PairResult(Direction.PUSH, "nvl72-node-00", Payloads.uuid(0), String.format("nvl72-node-%02d",
                    i / 4), Payloads.uuid(1000 + i), Verdict.PASS, 0.014, null, template.stages(), null));
        }
        pairs.forEach(recorder::record);
        int[] next = {0};
        m.put("recordOneResultUs", time(() -> {
            recorder.record(pairs.get(next[0]++ % pairs.size()));
            return null;
        }, 71));
        String text = registry.scrape();
        m.put("series", text.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).count());
        m.put("bytes", text.length());
        m.put("scrapeMs", Stats.round(time(registry::scrape, 1) / 1e3));
        // Scrapes while another thread records results, as the mesh does during a round.
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread writer = Thread.ofPlatform().start(() -> {
            int i = 0;
            while (!stop.get()) {
                recorder.record(pairs.get(i++ % pairs.size()));
            }
        });
        int failures = 0;
        String failure = null;
        int scrapes = quick ? 3 : 100;
        try {
            for (int i = 0; i < scrapes; i++) {
                try {
                    registry.scrape();
                } catch (RuntimeException e) {
                    failures++;
                    failure = e.toString();
                }
            }
        } finally {
            stop.set(true);
            writer.join();
        }
        m.put("scrapesWhileRecording", scrapes);
        m.put("scrapesFailedWhileRecording", failures);
        if (failure != null) {
            m.put("scrapeFailure", failure.length() > 200 ? failure.substring(0, 200) : failure);
        }
        return m;
    }

    /** A push ProbeReport as /probe answers it: one pair, ten stages. */
    static ProbeReport probeReport(ImportReply reply) {
        List<StageResult> stages = new ArrayList<>();
        stages.add(new StageResult(Stage.CREATE, StageStatus.OK, 0, "CUDA_SUCCESS", 0.001185,
                "created 2 MiB on GPU 0 (FABRIC) and wrote the pattern"));
        stages.add(new StageResult(Stage.EXPORT, StageStatus.OK, 0, "CUDA_SUCCESS", 0.000179,
                "exported a 64-byte FABRIC handle"));
        stages.add(new StageResult(Stage.TRANSFER, StageStatus.OK, null, null, 0.004233, "handle sent to bench-b (200)"));
        for (StageResult r : reply.stages()) {
            if (r.name() == Stage.WRITEBACK) {
                stages.add(new StageResult(Stage.WRITEBACK, StageStatus.OK, 0, "CUDA_SUCCESS", 0.001746,
                        "importer wrote; exporter: the exporter sees the importer's write-back pattern"));
            } else if (r.name() == Stage.RELEASE) {
                stages.add(new StageResult(Stage.RELEASE, StageStatus.OK, 0, "CUDA_SUCCESS", 0.000558,
                        "importer: released 2 driver resources; exporter: released 2 driver resources"));
            } else {
                stages.add(r);
            }
        }
        PairResult pair = new PairResult(Direction.PUSH, "bench-a", Payloads.uuid(0), "bench-b", Payloads.uuid(1),
                Verdict.PASS, 0.0142, null, List.copyOf(stages), null);
        return new ProbeReport("127.0.0.1:18082", "bench-b", Verdict.PASS, 0.0142, List.of(pair));
    }
}
