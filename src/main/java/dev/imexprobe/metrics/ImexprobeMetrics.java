package dev.imexprobe.metrics;

import dev.imexprobe.condition.NodeConditionWriter;
import dev.imexprobe.cuda.ContextPolicy;
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
import dev.imexprobe.probe.Verdict;

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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

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
    private final Supplier<Integer> driverCallsStuck;
    /** Write: a refresh of the gauges; read: a scrape (see {@link #consistent}). */
    private final ReadWriteLock gauges = new ReentrantReadWriteLock();
    private MeterRegistry registry;
    private LiveRows pairUp;
    private LiveRows pairLastCuResult;
    private LiveRows pairLastSuccess;
    private LiveRows fabricState;
    private LiveRows fabricHealthy;
    private LiveRows pairs;
    private LiveRows gpuDomain;
    private dev.imexprobe.cuda.PrimaryContexts contexts;
    private final java.util.Set<String> contextGpus = new java.util.HashSet<>();
    // The stages' meters are never removed, so each is built once, for the registry bound last: building and
    // registering one per stage per probe (its tags merged, its buckets copied) was a seventh of what an exporter
    // allocated per probe (docs/performance.md, session 2026-12-06 p).
    private final Map<StageMeter, Counter> stageCounters = new ConcurrentHashMap<>();
    private final Map<StageMeter, Timer> stageTimers = new ConcurrentHashMap<>();
    /**
     * imexprobe_probes_total by pair (source node and GPU, target node and GPU): removed with the pair's other series,
     * so the counters of departed peers, of addresses never identified and of probes across domains do not pile up
     * until a restart (Σ dᵢ² holds for them too). A pair that comes back starts again at 0, which rate() reads as a
     * reset.
     */
    private final Map<List<String>, java.util.Set<Counter>> probeCounters = new ConcurrentHashMap<>();

    private record StageMeter(Stage stage, String cuResult, Tags extra) {
    }

    public ImexprobeMetrics(Supplier<NodeReport> node, MeshState mesh, Supplier<Integer> peersKnown,
                            Supplier<Integer> driverCallsStuck, boolean pairLabels, String version) {
        this.node = node;
        this.peersKnown = peersKnown;
        this.driverCallsStuck = driverCallsStuck;
        this.mesh = mesh;
        this.pairLabels = pairLabels;
        this.version = version;
    }

    /** Reports when this process holds each GPU's primary context (the JNI driver's; absent in tests). */
    public ImexprobeMetrics contexts(dev.imexprobe.cuda.PrimaryContexts contexts) {
        this.contexts = contexts;
        return this;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        this.registry = registry;
        stageCounters.clear();
        stageTimers.clear();
        pairUp = new LiveRows(MultiGauge.builder("imexprobe.pair.up")
                .description("1 when the pair's last probe passed, 0 when it failed (source exports, target imports)")
                .register(registry));
        pairLastCuResult = new LiveRows(MultiGauge.builder("imexprobe.pair.last.cu.result")
                .description("CUresult code of the first failing stage of the pair's last probe; 0 when it passed "
                        + "or the failing stage made no driver call")
                .register(registry));
        pairLastSuccess = new LiveRows(MultiGauge.builder("imexprobe.pair.last.success.timestamp").baseUnit("seconds")
                .description("Unix time of the pair's last passing probe; 0 if it never passed")
                .register(registry));
        fabricState = new LiveRows(MultiGauge.builder("imexprobe.fabric.state")
                .description("NVML fabric state of the GPU: 0 not supported, 1 not started, 2 in progress, 3 completed")
                .register(registry));
        fabricHealthy = new LiveRows(MultiGauge.builder("imexprobe.fabric.healthy")
                .description("1 when the GPU's fabric registration completed and reports no problem, else 0")
                .register(registry));
        pairs = new LiveRows(MultiGauge.builder("imexprobe.pairs")
                .description("Pairs this agent knows, by state (ok, failed, unknown, not_probed) and reason (the "
                        + "pair's finding code; none without one)")
                .register(registry));
        String mode = node.get().channelMode();
        if (mode != null) {
            Gauge.builder("imexprobe.channel.mode", () -> 1).tag("mode", mode)
                    .description("Always 1; mode is this agent's imexprobe.channel.mode: observer (no channel by "
                            + "configuration, probes nothing), hostPath or computeDomain")
                    .register(registry);
        }
        gpuDomain = new LiveRows(MultiGauge.builder("imexprobe.gpu.imex.domain.info")
                .description("Always 1 per GPU; the domain label is the GPU's IMEX domain (fabric:<cluster>/<clique>, "
                        + "or host:<id> for a GPU without an NVLink fabric)")
                .register(registry));
        Gauge.builder("imexprobe.mesh.last.cycle.timestamp", mesh,
                        m -> m.lastCycle() == null ? 0 : m.lastCycle().toEpochMilli() / 1000.0)
                .baseUnit("seconds").description("Unix time this agent last finished a mesh round; 0 before the first")
                .register(registry);
        // The suppliers are method references made for this object alone: a gauge holds its object weakly unless
        // told otherwise, and would read NaN once nothing else holds them (seen in a unit test after a GC)
        Gauge.builder("imexprobe.peers", peersKnown, Supplier::get).strongReference(true)
                .description("Peer agents this agent's discovery knows")
                .register(registry);
        Gauge.builder("imexprobe.imex.channels", node, n -> n.get().usableChannels()).strongReference(true)
                .description("IMEX channels this agent's process can use").register(registry);
        Gauge.builder("imexprobe.imex.daemon.ready", node,
                        n -> n.get().imexDaemon().state() == ImexDaemonState.READY ? 1 : 0).strongReference(true)
                .description("1 when nvidia-imex-ctl -q says READY on this node").register(registry);
        Gauge.builder("imexprobe.gpus.visible", node, n -> n.get().gpus().size()).strongReference(true)
                .description("GPUs this agent's process sees").register(registry);
        Gauge.builder("imexprobe.gpus.fabric.capable", node,
                        n -> n.get().gpus().stream().filter(g -> ContextPolicy.noFabricMemory(g) == null).count())
                .strongReference(true)
                .description("GPUs this agent sees that can make fabric memory: none of them reports "
                        + "HANDLE_TYPE_FABRIC_SUPPORTED=0 or VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED=0")
                .register(registry);
        for (LiveAllocations.Kind kind : LiveAllocations.Kind.values()) {
            Gauge.builder("imexprobe.allocations.live", () -> LiveAllocations.count(kind))
                    .tag("kind", kind.name().toLowerCase(Locale.ROOT))
                    .description("Driver resources this agent holds now: created and imported handles, mappings")
                    .register(registry);
        }
        Gauge.builder("imexprobe.driver.calls.stuck", driverCallsStuck, Supplier::get).strongReference(true)
                .description("Driver calls past their deadline that have not returned; each holds a driver thread "
                        + "and what it acquired until it returns or the process exits")
                .register(registry);
        NodeReport.DriverView d = node.get().driver();
        Gauge.builder("imexprobe.build.info", () -> 1)
                .tags("version", version, "driver_version", d.driverVersion() != null ? d.driverVersion() : "unknown",
                        "cuda_version", d.cudaVersion() != null ? d.cudaVersion() : "unknown")
                .description("Always 1; the labels say which imexprobe, driver and CUDA version run here")
                .register(registry);
        for (String result : NodeConditionWriter.RESULTS) {
            nodeConditionWrites(result);
        }
        if (!pairLabels) {
            // Present at zero from the first scrape, so rates and alerts work before the first probe.
            for (Stage s : Stage.values()) {
                stageTimer(s, Tags.empty());
                // The transfer makes no driver call: its success is counted as "none", never CUDA_SUCCESS.
                stageCounter(s, s == Stage.TRANSFER ? "none" : "CUDA_SUCCESS", Tags.empty());
            }
        }
        refreshGauges();
    }

    /** One patch of the Node condition, by its result (NodeConditionWriter.RESULTS). */
    public void nodeConditionWrite(String result) {
        if (registry != null) {
            nodeConditionWrites(result).increment();
        }
    }

    private Counter nodeConditionWrites(String result) {
        return Counter.builder("imexprobe.node.condition.writes").tag("result", result)
                .description("Patches of this node's ImexFabricImport condition, by result: ok, forbidden (401/403), "
                        + "conflict (409), error (other HTTP status), unreachable (no answer)")
                .register(registry);
    }

    @Override
    public void onResult(PairResult r) {
        if (registry == null) {
            return;
        }
        Tags pair = Tags.of("source_node", nz(r.sourceNode()), "source_gpu", nz(r.sourceGpu()),
                "target_node", nz(r.targetNode()), "target_gpu", nz(r.targetGpu()),
                "domain", nz(mesh.domainOf(r.sourceGpu())));
        // Under the read lock: a refresh (write lock) that removes a departed pair's counters either sees this pair
        // in the mesh (recorded before this call) or runs before its counter is registered, never in between.
        gauges.readLock().lock();
        try {
            java.util.Set<Counter> counters = probeCounters.computeIfAbsent(pairOf(r.sourceNode(), r.sourceGpu(),
                    r.targetNode(), r.targetGpu()), k -> ConcurrentHashMap.newKeySet());
            if (counters.isEmpty() && r.verdict() != Verdict.NOT_PROBED) {
                // Both verdicts from a pair's first probe, the other at 0: a series that first appears at 1 has no
                // sample to increase from, so increase() missed a pair's first failure (ImexprobePairImportIntermittent
                // counts them).
                counters.add(probeCounter(pair, Verdict.PASS));
                counters.add(probeCounter(pair, Verdict.FAIL));
            }
            Counter probes = probeCounter(pair, r.verdict());
            counters.add(probes);
            probes.increment();
        } finally {
            gauges.readLock().unlock();
        }
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

    /** Forgotten pairs lose their series at the end of the round that forgot them, not a round later. */
    @Override
    public void onCycleFinished() {
        refreshGauges();
    }

    /** And at once when forgotten between rounds. */
    @Override
    public void onPairsForgotten() {
        refreshGauges();
    }

    private Counter probeCounter(Tags pair, Verdict verdict) {
        return Counter.builder("imexprobe.probes").tags(pair).tag("verdict", verdict.label())
                .description("Probes of one pair in one direction, by verdict").register(registry);
    }

    private Counter stageCounter(Stage stage, String cuResult, Tags extra) {
        return stageCounters.computeIfAbsent(new StageMeter(stage, cuResult, extra), k ->
                Counter.builder("imexprobe.stage.results").tag("stage", stage.label()).tag("cu_result", cuResult)
                        .tags(extra).description("Stages run, by stage and CUresult name (none: no driver call, or "
                                + "no answer)")
                        .register(registry));
    }

    private Timer stageTimer(Stage stage, Tags extra) {
        return stageTimers.computeIfAbsent(new StageMeter(stage, null, extra), k ->
                Timer.builder("imexprobe.stage.duration").tag("stage", stage.label()).tags(extra)
                        .serviceLevelObjectives(BUCKETS).description("How long each stage took")
                        .register(registry));
    }

    /**
     * Runs a read of the registry (a scrape) while no refresh is half done. Without it a scrape could read a pair's
     * imexprobe_pair_up after a refresh set it to 0 and its imexprobe_pair_last_cu_result before that refresh set the
     * code: ImexprobePairImportFailing went pending with cu_result none for a pair whose import failed with 800
     * (LivePrometheusIT). Scrapes share the lock with each other and wait for a refresh in progress (microseconds);
     * a refresh waits for the scrapes in progress, which collect values and write nothing to the network under the
     * lock.
     */
    public <T> T consistent(Supplier<T> read) {
        gauges.readLock().lock();
        try {
            return read.get();
        } finally {
            gauges.readLock().unlock();
        }
    }

    /** Re-reads the mesh state and the node report into the gauges (after each result and each round). */
    public void refreshGauges() {
        if (registry == null) {
            return;
        }
        gauges.writeLock().lock();
        try {
            refresh();
        } finally {
            gauges.writeLock().unlock();
        }
    }

    private void refresh() {
        Map<Tags, Double> up = new HashMap<>();
        Map<Tags, Double> code = new HashMap<>();
        Map<Tags, Double> success = new HashMap<>();
        Map<Tags, Double> byState = new HashMap<>();
        for (PairState.State st : PairState.State.values()) {
            byState.put(Tags.of("state", st.label(), "reason", "none"), 0.0); // from the first scrape, at zero
        }
        java.util.Set<List<String>> withSeries = new java.util.HashSet<>();
        for (PairState p : mesh.snapshot()) {
            byState.merge(Tags.of("state", p.state().label(), "reason", reason(p)), 1.0, Double::sum);
            if (p.state() != PairState.State.OK && p.state() != PairState.State.FAILED || p.acrossDomains()) {
                // unknown yet, not probed by design, or an on-demand probe across domains (apart by design): no
                // pair series, so nothing to alert on, and pair series only within a domain (Σ dᵢ², not N²)
                continue;
            }
            withSeries.add(pairOf(p.sourceNode(), p.sourceGpu(), p.targetNode(), p.targetGpu()));
            Tags t = Tags.of("source_node", p.sourceNode(), "source_gpu", p.sourceGpu(), "target_node", p.targetNode(),
                    "target_gpu", p.targetGpu(), "domain", nz(p.domain()));
            up.put(t, p.state() == PairState.State.OK ? 1.0 : 0.0);
            code.put(t, p.state() == PairState.State.OK || p.cuResult() == null ? 0.0 : p.cuResult());
            Instant last = p.lastSuccess();
            success.put(t, last == null ? 0 : last.toEpochMilli() / 1000.0);
        }
        probeCounters.entrySet().removeIf(e -> {
            if (withSeries.contains(e.getKey())) {
                return false;
            }
            e.getValue().forEach(registry::remove);
            return true;
        });
        pairs.set(byState);
        pairUp.set(up);
        pairLastCuResult.set(code);
        pairLastSuccess.set(success);
        Map<Tags, Double> state = new HashMap<>();
        Map<Tags, Double> healthy = new HashMap<>();
        for (GpuDevice g : node.get().gpus()) {
            if (g.uuid() == null) {
                continue;
            }
            Tags t = gpuTags(g);
            state.put(t, g.fabric() == null ? 0.0 : g.fabric().state());
            healthy.put(t, g.fabric() != null && Boolean.TRUE.equals(g.fabric().healthy()) ? 1.0 : 0.0);
        }
        fabricState.set(state);
        fabricHealthy.set(healthy);
        Map<Tags, Double> domains = new HashMap<>();
        for (GpuDevice g : node.get().gpus()) {
            if (g.uuid() != null && g.imexDomain() != null) {
                domains.put(gpuTags(g).and("domain", g.imexDomain()), 1.0);
            }
        }
        gpuDomain.set(domains);
        if (contexts != null) {
            for (GpuDevice g : node.get().gpus()) {
                if (g.uuid() != null && contextGpus.add(g.uuid())) {
                    int index = g.index();
                    dev.imexprobe.cuda.PrimaryContexts c = contexts;
                    // read live at each scrape: a context released by its linger between rounds shows at once
                    Gauge.builder("imexprobe.cuda.context.held", c, x -> x.held(index) ? 1 : 0)
                            .description("1 while this agent holds the GPU's primary context (GPU memory taken "
                                    + "from jobs), else 0").tags(gpuTags(g)).register(registry);
                    io.micrometer.core.instrument.FunctionCounter.builder("imexprobe.cuda.context.creations", c,
                                    x -> x.creations(index))
                            .description("Primary contexts this agent created on the GPU (each ~50 ms of driver time)")
                            .tags(gpuTags(g)).register(registry);
                }
            }
        }
    }

    /**
     * The rows of one MultiGauge, each registered once per label set and reading a value that is updated in place;
     * rows whose label set is gone are removed. Never MultiGauge.register(rows, true): that removes and re-adds every
     * row's gauge, and a scrape in between can collect one gauge twice (a one-row gauge's Prometheus collector is
     * dropped and re-created; micrometer#6851), so /actuator/prometheus answers 500 DuplicateLabelsException and
     * Prometheus records up == 0 for a healthy agent. Called under refreshGauges' lock.
     *
     * <p>The rows are handed to the MultiGauge only when a label set came or went: a refresh runs after every
     * result, and with the same label sets registering would change nothing (each row's gauge already reads its
     * holder) but rebuild every row's id, on every probe (5 KiB of garbage per probe of a one-peer agent, more
     * per peer).
     */
    static final class LiveRows {
        private final MultiGauge gauge;
        private final Map<Tags, Value> values = new HashMap<>();

        LiveRows(MultiGauge gauge) {
            this.gauge = gauge;
        }

        void set(Map<Tags, Double> now) {
            boolean changed = values.keySet().retainAll(now.keySet());
            for (Map.Entry<Tags, Double> e : now.entrySet()) {
                Value holder = values.get(e.getKey());
                if (holder == null) {
                    holder = new Value();
                    values.put(e.getKey(), holder);
                    changed = true;
                }
                holder.value = e.getValue();
            }
            if (!changed) {
                return;
            }
            List<MultiGauge.Row<?>> rows = new ArrayList<>(values.size());
            values.forEach((tags, holder) -> rows.add(MultiGauge.Row.of(tags, holder, Value::get)));
            gauge.register(rows, false);
        }
    }

    /** A gauge's current value, written by the refresh and read by scrapes. */
    private static final class Value {
        volatile double value;

        double get() {
            return value;
        }
    }

    /**
     * The labels of every per-GPU series, as dcgm-exporter names them so that {@code imexprobe_* * on (UUID)
     * DCGM_FI_*} joins: {@code gpu} the device index (NVML/CUDA order on the node), {@code UUID} the GPU UUID. Pair
     * series keep {@code source_gpu}/{@code target_gpu} = the UUIDs (docs/metrics.md shows the join for them).
     */
    static Tags gpuTags(GpuDevice g) {
        return Tags.of("gpu", Integer.toString(g.index()), "UUID", g.uuid());
    }

    /** A catalogue code (bounded: FindingCode), "none" without a finding, "other" for a code a peer made up. */
    static String reason(PairState p) {
        if (p.finding() == null) {
            return "none";
        }
        return FINDING_CODES.contains(p.finding().code()) ? p.finding().code() : "other";
    }

    private static final java.util.Set<String> FINDING_CODES = java.util.Arrays.stream(
            dev.imexprobe.finding.FindingCode.values()).map(Enum::name).collect(java.util.stream.Collectors.toSet());

    private static List<String> pairOf(String sourceNode, String sourceGpu, String targetNode, String targetGpu) {
        return List.of(nz(sourceNode), nz(sourceGpu), nz(targetNode), nz(targetGpu));
    }

    private static String nz(String s) {
        return s == null ? "unknown" : s;
    }
}
