package dev.imexprobe.cli;

import dev.imexprobe.args.CommandLine;
import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.JniCudaDriver;
import dev.imexprobe.cuda.LiveAllocations;
import dev.imexprobe.cuda.MemoryHeadroom;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.json.Json;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.ImexChannel;
import dev.imexprobe.node.NodeInspectorSettings;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeReporter;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.SelfProbe;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code check}: the node report, a self-probe on every visible GPU, and the findings. Exit codes follow
 * node-problem-detector: 0 healthy, 1 a finding of severity error, 2 could not tell (no driver, no GPU).
 */
final class CheckCommand {

    static final int OK = 0;
    static final int PROBLEM = 1;
    static final int UNKNOWN = 2;

    private CheckCommand() {
    }

    record Options(boolean json, int repeat, Long sizeBytes) {
    }

    /** The JSON document: /v1/node's fields plus the self-probes. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record CheckDocument(@JsonUnwrapped NodeReport node, List<SelfProbe.SelfProbeResult> selfProbe,
                         List<RepeatSummary> repeat, Verdict verdict, int exitCode) {
    }

    /** What {@code --repeat N} measured on one GPU. */
    record RepeatSummary(int gpu, int runs, int passed, int failed, Map<String, Integer> failuresByCuResult,
                         Map<String, double[]> stageSecondsP50P99, Long gpuMemoryFreeBefore,
                         Long gpuMemoryFreeAfter, long liveAllocationsAfter, double wallSeconds) {
    }

    /**
     * Why {@code --size} cannot be allocated on a GPU the check would probe, or null. cuMemCreate refuses a size that
     * is not a multiple of the GPU's granularity with INVALID_VALUE, which the self-probe would report as the node's
     * DRIVER_ERROR; it is the request that is wrong, as {@code /probe} and {@code /v1/exports} answer with a 400.
     */
    static String badSize(Long sizeBytes, List<GpuDevice> gpus) {
        String why = sizeBytes == null ? null : GpuDevice.sizeRefusal(gpus, sizeBytes);
        return why == null ? null : "--size: " + why;
    }

    static int run(String[] args, PrintStream out) {
        Options options;
        MemoryHeadroom headroom;
        try {
            options = parse(args);
            // as the agent's imexprobe.driver.min-free-memory: a check beside a job that filled its GPU takes nothing
            headroom = MemoryHeadroom.parse(System.getenv("IMEXPROBE_DRIVER_MINFREEMEMORY"));
        } catch (IllegalArgumentException e) {
            System.err.println("check: " + e.getMessage());
            Main.usage(System.err);
            return Main.USAGE;
        }
        CudaDriver driver;
        try {
            driver = JniCudaDriver.get();
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            // The shim itself cannot load (wrong architecture, no writable tmpdir): still answer, exit 2.
            out.println(options.json() ? Json.PRETTY.writeValueAsString(Map.of("error", String.valueOf(e.getMessage()), "exitCode", UNKNOWN))
                    : "imexprobe check: the native library cannot be loaded: " + e.getMessage());
            return UNKNOWN;
        }
        AgentIdentity identity = AgentIdentity.create(System.getenv("IMEXPROBE_NODE_NAME"));
        NodeReporter reporter = new NodeReporter(driver, NodeInspectorSettings.defaults(), identity).headroom(headroom);
        NodeReport report = reporter.report();
        String badSize = badSize(options.sizeBytes(), report.gpus());
        if (badSize != null) {
            System.err.println("check: " + badSize);
            Main.usage(System.err);
            return Main.USAGE;
        }
        List<SelfProbe.SelfProbeResult> probes = new ArrayList<>();
        List<RepeatSummary> repeats = new ArrayList<>();
        List<Finding> busy = new ArrayList<>();
        try (DriverExecutor executor = new DriverExecutor(2, Duration.ofSeconds(5))) {
            SelfProbe selfProbe = new SelfProbe(driver, new StageEngine(executor));
            for (GpuDevice gpu : report.gpus()) {
                if (gpu.notProbed() != null) {
                    continue; // compute mode or MIG: no context here; the node report carries the finding
                }
                Finding filled = reporter.memoryRefusal(gpu);
                if (filled != null) {
                    busy.add(filled); // a job is using its memory: no context, the finding says why
                    continue;
                }
                long size = options.sizeBytes() != null ? options.sizeBytes()
                        : gpu.granularityBytes() > 0 ? gpu.granularityBytes() : 2L << 20;
                if (options.repeat() > 1) {
                    RepeatResult r = repeat(driver, selfProbe, gpu.index(), size, options.repeat(), identity.node());
                    repeats.add(r.summary());
                    probes.add(r.last());
                } else {
                    probes.add(selfProbe.run(gpu.index(), size, identity.node()));
                }
            }
        }
        List<Finding> findings = new ArrayList<>(report.findings());
        findings.addAll(busy);
        probes.stream().map(SelfProbe.SelfProbeResult::finding).filter(f -> f != null && !findings.contains(f))
                .forEach(findings::add);
        int code = exitCode(report, findings, probes);
        NodeReport withAll = new NodeReport(report.agent(), report.fake(), report.driver(), report.gpus(),
                report.usableChannels(), report.imexChannels(), report.imexDaemon(), report.driverParams(),
                report.deviceNodes(), report.visibleDevices(), List.copyOf(findings), report.inspectedAt());
        if (options.json()) {
            out.println(Json.PRETTY.writeValueAsString(new CheckDocument(withAll, probes, repeats.isEmpty() ? null : repeats,
                    code == OK ? Verdict.PASS : Verdict.FAIL, code)));
        } else {
            printTable(out, withAll, probes, repeats, code);
        }
        return code;
    }

    static int exitCode(NodeReport report, List<Finding> findings, List<SelfProbe.SelfProbeResult> probes) {
        if (!report.driver().loaded() || report.gpus().isEmpty()) {
            return UNKNOWN;
        }
        boolean error = findings.stream().anyMatch(f -> f.severity() == Severity.ERROR)
                || probes.stream().anyMatch(p -> p.verdict() == Verdict.FAIL);
        return error ? PROBLEM : OK;
    }

    static Options parse(String[] args) {
        CommandLine c = CommandLine.parse(args, Set.of("--json"), Set.of("--repeat", "--size"));
        Long repeat = c.number("--repeat", 1, Integer.MAX_VALUE);
        return new Options(c.has("--json"), repeat == null ? 1 : repeat.intValue(),
                c.number("--size", 1, Long.MAX_VALUE));
    }

    record RepeatResult(RepeatSummary summary, SelfProbe.SelfProbeResult last) {
    }

    /** N self-probes in one process: pass/fail counts, per-stage p50/p99 and GPU memory before and after. */
    static RepeatResult repeat(CudaDriver driver, SelfProbe probe, int gpu, long size, int n, String node) {
        // one context for the whole run: its memory before and after are then comparable
        return driver.withContext(gpu, () -> repeatHeld(driver, probe, gpu, size, n, node));
    }

    private static RepeatResult repeatHeld(CudaDriver driver, SelfProbe probe, int gpu, long size, int n,
                                           String node) {
        long start = System.nanoTime();
        CuCall<long[]> before = driver.memoryInfo(gpu);
        Map<Stage, double[]> seconds = new EnumMap<>(Stage.class);
        Map<String, Integer> failures = new LinkedHashMap<>();
        int passed = 0;
        SelfProbe.SelfProbeResult last = null;
        for (int i = 0; i < n; i++) {
            last = probe.run(gpu, size, node);
            if (last.verdict() == Verdict.PASS) {
                passed++;
            } else {
                StageResult f = StageEngine.firstFailure(last.stages());
                String key = f == null ? "release" : f.name().label() + ":"
                        + (f.cuResultName() != null ? f.cuResultName() : f.status().label());
                failures.merge(key, 1, Integer::sum);
            }
            for (StageResult r : last.stages()) {
                seconds.computeIfAbsent(r.name(), k -> new double[n])[i] = r.durationSeconds();
            }
        }
        CuCall<long[]> after = driver.memoryInfo(gpu);
        Map<String, double[]> percentiles = new LinkedHashMap<>();
        seconds.forEach((stage, values) -> {
            double[] sorted = values.clone();
            Arrays.sort(sorted);
            percentiles.put(stage.label(), new double[] {sorted[(int) Math.floor((n - 1) * 0.5)],
                    sorted[(int) Math.floor((n - 1) * 0.99)]});
        });
        RepeatSummary summary = new RepeatSummary(gpu, n, passed, n - passed, failures, percentiles,
                before.ok() ? before.value()[0] : null, after.ok() ? after.value()[0] : null,
                LiveAllocations.total(), (System.nanoTime() - start) / 1e9);
        return new RepeatResult(summary, last);
    }

    // ---- the human-readable report --------------------------------------------------------------------------

    static void printTable(PrintStream out, NodeReport r, List<SelfProbe.SelfProbeResult> probes,
                           List<RepeatSummary> repeats, int code) {
        out.printf("imexprobe %s — node %s%s%n", r.agent().version(), r.agent().node(),
                r.fake() ? "   [SIMULATED: fake driver, results are not real]" : "");
        NodeReport.DriverView d = r.driver();
        if (d.loaded()) {
            out.printf("driver     %s, CUDA %s (%s)%n", d.driverVersion() != null ? d.driverVersion() : "version unknown",
                    d.cudaVersion(), d.library());
        } else {
            out.printf("driver     none: %s%n", d.message());
        }
        for (GpuDevice g : r.gpus()) {
            out.printf("GPU %-6d %s  %s  %s%n", g.index(), g.name(), g.uuid(), g.pciBusId());
            out.printf("           fabric=%s vmm=%s posixFd=%s multicast=%s granularity=%s%n",
                    yes(g.attributes().get("fabric")), yes(g.attributes().get("virtualMemoryManagement")),
                    yes(g.attributes().get("posixFileDescriptor")), yes(g.attributes().get("multicast")),
                    g.granularityBytes() > 0 ? (g.granularityBytes() >> 20) + " MiB" : "-");
            out.printf("           NVLink fabric: %s%n", g.fabric() == null ? "unknown (" + g.fabricResult().name() + ")"
                    : g.fabric().stateName() + (g.fabric().completed() ? ", clique " + g.fabric().cliqueId() + ", cluster "
                    + g.fabric().clusterUuid() + ", health " + g.fabric().healthSummaryName() : ""));
        }
        out.printf("channels   %s: %s%n", r.imexChannels().directory(), channels(r));
        out.printf("daemon     %s%s%n", r.imexDaemon().state(), r.imexDaemon().detail() != null ? " (" + r.imexDaemon().detail() + ")" : "");
        if (r.visibleDevices().set()) {
            // NVML ignores CUDA_VISIBLE_DEVICES but not a hidden device node: the GPUs it hides are still here.
            List<String> nvml = d.nvmlGpus();
            out.printf("visible    CUDA_VISIBLE_DEVICES=%s%s%n", r.visibleDevices().raw(), nvml == null ? ""
                    : " (CUDA shows " + r.gpus().size() + " of the " + nvml.size() + " GPUs NVML reaches here)");
        }
        for (SelfProbe.SelfProbeResult p : probes) {
            out.printf("%nself-probe GPU %d (%d MiB): %s in %.3f ms%n", p.gpu(), p.sizeBytes() >> 20,
                    p.verdict().label().toUpperCase(), p.durationSeconds() * 1000);
            for (StageResult s : p.stages()) {
                out.printf("  %-10s %-8s %-28s %9.3f ms  %s%n", s.name().label(), s.status().label(),
                        s.cuResultName() != null ? s.cuResultName() : "", s.durationSeconds() * 1000, s.detail());
            }
        }
        for (RepeatSummary s : repeats) {
            out.printf("%nrepeat GPU %d: %d runs, %d passed, %d failed %s in %.1f s; GPU memory free before %s, after %s; "
                            + "live allocations after: %d%n", s.gpu(), s.runs(), s.passed(), s.failed(),
                    s.failuresByCuResult().isEmpty() ? "" : s.failuresByCuResult(), s.wallSeconds(),
                    mib(s.gpuMemoryFreeBefore()), mib(s.gpuMemoryFreeAfter()), s.liveAllocationsAfter());
            s.stageSecondsP50P99().forEach((stage, p) -> out.printf("  %-10s p50 %8.3f ms  p99 %8.3f ms%n", stage,
                    p[0] * 1000, p[1] * 1000));
        }
        out.printf("%nfindings%n");
        if (r.findings().isEmpty()) {
            out.println("  none");
        }
        for (Finding f : r.findings()) {
            out.printf("  [%s] %s: %s%n", f.severity().label(), f.code(), f.cause());
            out.printf("      remedy: %s%n", f.remedy());
        }
        out.printf("%nverdict: %s (exit %d)%n", code == OK ? "OK" : code == PROBLEM ? "PROBLEM" : "UNKNOWN", code);
    }

    private static String channels(NodeReport r) {
        if (!r.imexChannels().exists()) {
            return "directory missing — 0 usable";
        }
        List<String> parts = new ArrayList<>();
        for (ImexChannel c : r.imexChannels().channels()) {
            parts.add(c.name() + " (" + (c.charDevice() ? "char " + c.major() + ":" + c.minor() : "file")
                    + (c.readable() ? ", readable" : ", unreadable") + ")");
        }
        return (parts.isEmpty() ? "no channels" : String.join(", ", parts)) + " — " + r.usableChannels() + " usable";
    }

    private static String yes(Object v) {
        return Integer.valueOf(1).equals(v) ? "yes" : Integer.valueOf(0).equals(v) ? "no" : String.valueOf(v);
    }

    private static String mib(Long bytes) {
        return bytes == null ? "unknown" : (bytes >> 20) + " MiB";
    }
}
