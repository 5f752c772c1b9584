package dev.imexprobe.agent;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeReporter;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.LocalAgent;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The agent's current view of its node, refreshed by the mesh every interval (channels come and go at run
 * time) and on demand. Readers always get a complete report, never one being built.
 */
public final class NodeService implements LocalAgent {

    private final NodeReporter reporter;
    private final AtomicReference<NodeReport> current = new AtomicReference<>();

    public NodeService(NodeReporter reporter) {
        this.reporter = reporter;
    }

    public NodeReport report() {
        NodeReport r = current.get();
        return r != null ? r : refresh();
    }

    public synchronized NodeReport refresh() {
        NodeReport r = reporter.report();
        current.set(r);
        return r;
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
        GpuSelector.Gpu g = GpuSelector.select(selector, gpus.stream().map(d -> new GpuSelector.Gpu(d.index(), d.uuid()))
                .toList(), "this agent (" + node() + ")").getFirst();
        return gpus.stream().filter(d -> d.index() == g.index()).findFirst().orElseThrow();
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
}
