package dev.imexprobe.node;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.LocalAgent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The agent's current view of its node, refreshed by the mesh every interval (channels come and go at run
 * time) and on demand. Readers always get a complete report, never one being built. Building one calls the
 * driver and NVML, so it runs on the driver pool under the driver deadline: a hung call leaves the last report
 * in place (with a TIMEOUT finding) instead of stopping the mesh or a request.
 */
public final class NodeService implements LocalAgent, dev.imexprobe.probe.ContextGuard {

    private static final Logger log = LoggerFactory.getLogger(NodeService.class);

    private final NodeReporter reporter;
    private final DriverExecutor executor;
    private final AtomicReference<NodeReport> current = new AtomicReference<>();

    public NodeService(NodeReporter reporter, DriverExecutor executor) {
        this.reporter = reporter;
        this.executor = executor;
    }

    public NodeReport report() {
        NodeReport r = current.get();
        return r != null ? r : refresh();
    }

    public NodeReport refresh() {
        reporter.readCluster(); // the Kubernetes API on this thread, never under the driver deadline
        DriverExecutor.Outcome<NodeReport> o = executor.run(reporter::report, late -> {
            if (late != null) {
                current.set(late); // the stuck call returned after all: its report is the newest
            }
        });
        if (o.ok()) {
            current.set(o.value());
            return o.value();
        }
        String why = o.timedOut() ? "the driver did not answer within " + executor.timeout().toMillis() + " ms"
                : o.rejected() ? "every driver thread is busy (" + executor.stuck() + " stuck in calls)"
                : "inspection failed: " + o.error();
        log.warn("node report not refreshed: {}", why);
        NodeReport last = current.get();
        if (last == null) {
            last = reporter.reportWithoutDriver();
            current.compareAndSet(null, last);
        }
        return withFinding(last, why);
    }

    private static NodeReport withFinding(NodeReport r, String why) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("stage", "node report");
        e.put("detail", why + "; showing the report of " + r.inspectedAt());
        List<Finding> findings = new ArrayList<>(r.findings());
        findings.removeIf(f -> f.is(FindingCode.TIMEOUT));
        findings.add(FindingCode.TIMEOUT.finding(e));
        return new NodeReport(r.agent(), r.fake(), r.driver(), r.gpus(), r.usableChannels(), r.imexChannels(),
                r.imexDaemon(), r.driverParams(), r.deviceNodes(), r.visibleDevices(), List.copyOf(findings),
                r.inspectedAt(), r.channelMode(), r.computeDomains(), r.cliqueLabel());
    }

    public AgentIdentity identity() {
        return reporter.identity();
    }

    /** The GPU a request names by index or UUID; the first GPU when it names none. */
    public GpuDevice resolveGpu(String selector) {
        List<GpuDevice> gpus = report().gpus();
        if (gpus.isEmpty()) {
            throw new IllegalArgumentException("this agent sees no GPU (see GET /v1/node for why)");
        }
        if (selector == null || selector.isBlank()) {
            return gpus.getFirst();
        }
        for (GpuDevice d : gpus) {
            if (selector.equals(d.uuid())) {
                return d; // what the agents send: the exact UUID, found without building the selector's list
            }
        }
        GpuSelector.Gpu g = GpuSelector.select(selector, gpus.stream().map(d -> new GpuSelector.Gpu(d.index(), d.uuid()))
                .toList(), "this agent (" + node() + ")").getFirst();
        return gpus.stream().filter(d -> d.index() == g.index()).findFirst().orElseThrow();
    }

    /**
     * Why no context may be created on this GPU (compute mode, MIG, no fabric memory; too little free memory while
     * the agent holds none), from the current report; null when one may.
     */
    @Override
    public Finding refusal(int gpu) {
        for (GpuDevice d : report().gpus()) {  // a loop, not a stream: asked on every import (docs/performance.md)
            if (d.index() == gpu) {
                Finding refused = reporter.policy().refusal(d);
                return refused != null ? refused : reporter.memoryRefusal(d);
            }
        }
        return reporter.policy().refusal(null);
    }

    @Override
    public String node() {
        return reporter.identity().node();
    }

    @Override
    public String agentId() {
        return reporter.identity().id();
    }

    @Override
    public List<GpuDevice> gpus() {
        return report().gpus();
    }

    @Override
    public Boolean reaches(String uuid) {
        return report().reaches(uuid);
    }
}
