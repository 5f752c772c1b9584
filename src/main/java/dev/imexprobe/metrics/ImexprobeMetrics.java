package dev.imexprobe.metrics;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.LiveAllocations;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.PairState;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Every imexprobe meter, defined in this one place (names dotted; the Prometheus registry renders
 * imexprobe_probes_total, imexprobe_stage_duration_seconds_bucket, …). Counters and the histogram move with
 * each result; gauges read the mesh state and the node report. The series a dashboard or alert names exist
 * from the first scrape, at zero.
 */
public final class ImexprobeMetrics implements MeterBinder, ProbeRecorder.Listener {

    /** Bucket bounds of the stage histogram: the driver's 50 µs calls up to the 10 s peer deadline. */
    static final Duration[] BUCKETS = {
            Duration.ofNanos(50_000), Duration.ofNanos(100_000), Duration.ofNanos(250_000), Duration.ofNanos(500_000),
            Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5), Duration.ofMillis(10),
            Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
            Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5),
            Duration.ofSeconds(10)};

    private final Supplier<NodeReport> node;
    private final MeshState mesh;
    private final boolean pairLabels;
    private final String version;
    private final Supplier<Integer> peersKnown;
    private MeterRegistry registry;
    private MultiGauge pairUp;
    private MultiGauge pairLastCuResult;
    private MultiGauge pairLastSuccess;
    private MultiGauge fabricState;
    private MultiGauge fabricHealthy;
    private final Map<Tags, PairValues> pairValues = new HashMap<>();
    private final Map<Tags, GpuValues> gpuValues = new HashMap<>();

    public ImexprobeMetrics(Supplier<NodeReport> node, MeshState mesh, Supplier<Integer> peersKnown, boolean pairLabels,
                            String version) {
        this.node = node;
        this.peersKnown = peersKnown;
        this.mesh = mesh;
        this.pairLabels = pairLabels;
        this.version = version;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        this.registry = registry;
        pairUp = MultiGauge.builder("imexprobe.pair.up")
                .description("1 when the pair's last probe passed, 0 when it failed (source exports, target imports)")
                .register(registry);
        pairLastCuResult = MultiGauge.builder("imexprobe.pair.last.cu.result")
                .description("CUresult code of the first failing stage of the pair's last probe; 0 when it passed "
                        + "or the failing stage made no driver call")
                .register(registry);
        pairLastSuccess = MultiGauge.builder("imexprobe.pair.last.success.timestamp").baseUnit("seconds")
                .description("Unix time of the pair's last passing probe; 0 if it never passed")
                .register(registry);
        fabricState = MultiGauge.builder("imexprobe.fabric.state")
                .description("NVML fabric state of the GPU: 0 not supported, 1 not started, 2 in progress, 3 completed")
                .register(registry);
        fabricHealthy = MultiGauge.builder("imexprobe.fabric.healthy")
                .description("1 when the GPU's fabric registration completed and reports no problem, else 0")
                .register(registry);
        Gauge.builder("imexprobe.mesh.last.cycle.timestamp", mesh,
                        m -> m.lastCycle() == null ? 0 : m.lastCycle().toEpochMilli() / 1000.0)
                .baseUnit("seconds").description("Unix time this agent last finished a mesh round; 0 before the first")
                .register(registry);
        Gauge.builder("imexprobe.peers", peersKnown, Supplier::get)
                .description("Peer agents this agent's discovery knows")
                .register(registry);
        Gauge.builder("imexprobe.imex.channels", node, n -> n.get().usableChannels())
                .description("IMEX channels this agent's process can use").register(registry);
        Gauge.builder("imexprobe.imex.daemon.ready", node,
                        n -> n.get().imexDaemon().state() == ImexDaemonState.READY ? 1 : 0)
                .description("1 when nvidia-imex-ctl -q says READY on this node").register(registry);
        Gauge.builder("imexprobe.gpus.visible", node, n -> n.get().gpus().size())
                .description("GPUs this agent's process sees").register(registry);
        for (LiveAllocations.Kind kind : LiveAllocations.Kind.values()) {
            Gauge.builder("imexprobe.allocations.live", () -> LiveAllocations.count(kind))
                    .tag("kind", kind.name().toLowerCase(Locale.ROOT))
                    .description("Driver resources this agent holds now: created and imported handles, mappings")
                    .register(registry);
        }
        NodeReport.DriverView d = node.get().driver();
        Gauge.builder("imexprobe.build.info", () -> 1)
                .tags("version", version, "driver_version", d.driverVersion() != null ? d.driverVersion() : "unknown",
                        "cuda_version", d.cudaVersion() != null ? d.cudaVersion() : "unknown")
                .description("Always 1; the labels say which imexprobe, driver and CUDA version run here")
                .register(registry);
        if (!pairLabels) {
            // Present at zero from the first scrape, so rates and alerts work before the first probe.
            for (Stage s : Stage.values()) {
                stageTimer(s, Tags.empty());
                stageCounter(s, "CUDA_SUCCESS", Tags.empty());
            }
        }
        refreshGauges();
    }

    @Override
    public void onResult(PairResult r) {
        if (registry == null) {
            return;
        }
        Tags pair = Tags.of("source_node", nz(r.sourceNode()), "source_gpu", nz(r.sourceGpu()),
                "target_node", nz(r.targetNode()), "target_gpu", nz(r.targetGpu()));
        Counter.builder("imexprobe.probes").tags(pair).tag("verdict", r.verdict().label())
                .description("Probes of one pair in one direction, by verdict").register(registry).increment();
        Tags extra = pairLabels ? pair : Tags.empty();
        for (StageResult s : r.stages()) {
            if (s.status() == StageStatus.SKIPPED) {
                continue;
            }
            stageCounter(s.name(), s.cuResultName() != null ? s.cuResultName() : "none", extra).increment();
            stageTimer(s.name(), extra).record(Duration.ofNanos((long) (s.durationSeconds() * 1e9)));
        }
        refreshGauges();
    }

    private Counter stageCounter(Stage stage, String cuResult, Tags extra) {
        return Counter.builder("imexprobe.stage.results").tag("stage", stage.label()).tag("cu_result", cuResult)
                .tags(extra).description("Stages run, by stage and CUresult name (none: no driver call, or no answer)")
                .register(registry);
    }

    private Timer stageTimer(Stage stage, Tags extra) {
        return Timer.builder("imexprobe.stage.duration").tag("stage", stage.label()).tags(extra)
                .serviceLevelObjectives(BUCKETS).description("How long each stage took")
                .register(registry);
    }

    /**
     * Re-reads the mesh state and the node report into the gauges (after each result and each round). Each row
     * of a multi-gauge reads a holder that is updated in place; rows are only registered when they appear and
     * removed when they go. Re-registering every row each time (overwrite) made a scrape running at the same
     * moment see a family twice and fail (DuplicateLabelsException, HTTP 500), and cost about 0.5 ms per result.
     */
    public synchronized void refreshGauges() {
        if (registry == null) {
            return;
        }
        Map<Tags, PairValues> pairs = new LinkedHashMap<>();
        for (PairState p : mesh.snapshot()) {
            if (p.state() == PairState.State.UNKNOWN) {
                continue;
            }
            Tags t = Tags.of("source_node", p.sourceNode(), "source_gpu", p.sourceGpu(), "target_node", p.targetNode(),
                    "target_gpu", p.targetGpu());
            PairValues v = pairValues.computeIfAbsent(t, k -> new PairValues());
            v.up = p.state() == PairState.State.OK ? 1 : 0;
            v.cuResult = p.state() == PairState.State.OK || p.cuResult() == null ? 0 : p.cuResult();
            Instant last = p.lastSuccess();
            v.lastSuccess = last == null ? 0 : last.toEpochMilli() / 1000.0;
            pairs.put(t, v);
        }
        pairValues.keySet().retainAll(pairs.keySet());
        pairUp.register(rows(pairs, v -> v.up), false);
        pairLastCuResult.register(rows(pairs, v -> v.cuResult), false);
        pairLastSuccess.register(rows(pairs, v -> v.lastSuccess), false);
        Map<Tags, GpuValues> gpus = new LinkedHashMap<>();
        for (GpuDevice g : node.get().gpus()) {
            if (g.uuid() == null) {
                continue;
            }
            Tags t = Tags.of("gpu", g.uuid());
            GpuValues v = gpuValues.computeIfAbsent(t, k -> new GpuValues());
            v.state = g.fabric() == null ? 0 : g.fabric().state();
            v.healthy = g.fabric() != null && Boolean.TRUE.equals(g.fabric().healthy()) ? 1 : 0;
            gpus.put(t, v);
        }
        gpuValues.keySet().retainAll(gpus.keySet());
        fabricState.register(rows(gpus, v -> v.state), false);
        fabricHealthy.register(rows(gpus, v -> v.healthy), false);
    }

    private static <T> List<MultiGauge.Row<?>> rows(Map<Tags, T> values, ToDoubleFunction<T> value) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>(values.size());
        values.forEach((tags, holder) -> rows.add(MultiGauge.Row.of(tags, holder, value)));
        return rows;
    }

    /** What one pair's gauges show now. */
    private static final class PairValues {
        volatile double up;
        volatile double cuResult;
        volatile double lastSuccess;
    }

    /** What one GPU's fabric gauges show now. */
    private static final class GpuValues {
        volatile double state;
        volatile double healthy;
    }

    private static String nz(String s) {
        return s == null ? "unknown" : s;
    }
}
