package dev.imexprobe.node;

import dev.imexprobe.kubernetes.CliqueLabel;
import dev.imexprobe.kubernetes.ComputeDomainStatus;
import java.util.function.Supplier;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.DriverStatus;
import dev.imexprobe.cuda.GpuInventory;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;

/**
 * Builds a {@link NodeReport} from the driver and the node. With the fake driver loaded, the channel and device
 * directories are the fake's own (it says where in fakecudaInfo), so the report shows what the driver sees.
 */
public final class NodeReporter {

    private final CudaDriver driver;
    private final NodeInspectorSettings baseSettings;
    private final AgentIdentity identity;

    public NodeReporter(CudaDriver driver, NodeInspectorSettings settings, AgentIdentity identity) {
        this.driver = driver;
        this.baseSettings = settings;
        this.identity = identity;
    }

    public AgentIdentity identity() {
        return identity;
    }

    public NodeReport report() {
        return report(GpuInventory.scan(driver));
    }

    /** The node's own evidence with no GPU inventory: when the driver does not answer. */
    public NodeReport reportWithoutDriver() {
        return report(new GpuInventory(dev.imexprobe.cuda.CuResult.UNKNOWN, 0, null, java.util.List.of()));
    }

    private NodeReport report(GpuInventory inventory) {
        DriverStatus status = driver.status();
        NodeFacts facts = new NodeInspector(settingsFor(status), !observer).inspect();
        NodeReport.DriverView view = new NodeReport.DriverView(status.cudaLoaded(), status.cudaLibrary(),
                status.cudaLoaded() ? status.cudaMessage() : status.unavailableReason(), status.nvmlLoaded(),
                status.nvmlLibrary(), status.nvmlMessage(), inventory.driverVersion(), inventory.cudaDriverVersion(),
                inventory.cudaVersion(), inventory.init().name(), inventory.nvmlGpus());
        String host = hostId(status);
        java.util.List<dev.imexprobe.finding.Finding> findings = new java.util.ArrayList<>(
                LocalDiagnosis.diagnose(status, inventory, facts, joinClock));
        java.util.List<dev.imexprobe.cuda.GpuDevice> gpus = new java.util.ArrayList<>();
        for (dev.imexprobe.cuda.GpuDevice g : inventory.gpus()) {
            dev.imexprobe.finding.Finding refused = policy.refusal(g);
            if (refused != null) {
                findings.add(refused);
            }
            gpus.add(g.withImexDomain(dev.imexprobe.probe.ImexDomain.of(g.fabric(), host))
                    .withNotProbed(refused == null ? null : refused.code()));
        }
        readMemory(gpus);
        CliqueLabelCheck.Result label = CliqueLabelCheck.apply(identity.node(), gpus, seenLabel());
        if (label.finding() != null) {
            findings.add(label.finding());
        }
        ComputeDomainStatus domains = seenComputeDomains();
        findings.addAll(CliqueLabelCheck.computeDomains(gpus, domains));
        return new NodeReport(identity, status.isFake(), view, label.gpus(),
                LocalDiagnosis.usableChannels(facts.imexChannels(), status.isFake()), facts.imexChannels(),
                facts.imexDaemon(), facts.driverParams(), facts.deviceNodes(), facts.visibleDevices(),
                observed(java.util.List.copyOf(findings)), Instant.now(), channelMode, domains, label.view());
    }

    private volatile dev.imexprobe.cuda.ContextPolicy policy = dev.imexprobe.cuda.ContextPolicy.DEFAULT;
    private volatile dev.imexprobe.cuda.MemoryHeadroom headroom = dev.imexprobe.cuda.MemoryHeadroom.OFF;
    /** Per GPU index, why its memory keeps the agent off it, as of the last report; only while the headroom is on. */
    private volatile java.util.Map<Integer, dev.imexprobe.finding.Finding> memoryRefusals = java.util.Map.of();

    /**
     * Reads each probed GPU's memory through NVML (no context), with the report: on the driver pool under its
     * deadline, once per mesh round and on demand, so a hung NVML never holds a request. A GPU whose context this
     * process holds is not judged (its own memory is then among the used). The answer stands until the next report,
     * so every check within one exchange agrees.
     */
    private void readMemory(java.util.List<dev.imexprobe.cuda.GpuDevice> gpus) {
        dev.imexprobe.cuda.MemoryHeadroom h = headroom;
        if (!h.on()) {
            return;
        }
        java.util.Map<Integer, dev.imexprobe.finding.Finding> refused = new java.util.HashMap<>();
        for (dev.imexprobe.cuda.GpuDevice g : gpus) {
            if (g.uuid() != null && g.notProbed() == null && !driver.contextHeld(g.index())) {
                dev.imexprobe.cuda.NvmlCall<long[]> m = driver.nvmlMemory(g.uuid());
                dev.imexprobe.finding.Finding f = h.refusal(g, m.ok() ? m.value() : null);
                if (f != null) {
                    refused.put(g.index(), f);
                }
            }
        }
        memoryRefusals = java.util.Map.copyOf(refused);
    }

    /**
     * Why no context may be made on {@code gpu} for the memory a job holds there ({@link
     * dev.imexprobe.cuda.MemoryHeadroom}), as of the last report, or null.
     */
    public dev.imexprobe.finding.Finding memoryRefusal(dev.imexprobe.cuda.GpuDevice gpu) {
        return memoryRefusals.get(gpu.index());
    }

    public NodeReporter headroom(dev.imexprobe.cuda.MemoryHeadroom h) {
        this.headroom = h;
        return this;
    }

    /**
     * Which GPUs the agent may create a context on (compute mode, MIG, fabric support,
     * imexprobe.driver.probe-exclusive-process).
     */
    public NodeReporter policy(dev.imexprobe.cuda.ContextPolicy p) {
        this.policy = p;
        return this;
    }

    public dev.imexprobe.cuda.ContextPolicy policy() {
        return policy;
    }

    private volatile boolean observer;
    private volatile String channelMode;
    private volatile Supplier<ComputeDomainStatus> computeDomains;

    /** This node's ComputeDomains from the Kubernetes API (imexprobe.computedomains.enabled); cached by the source. */
    public NodeReporter computeDomains(Supplier<ComputeDomainStatus> source) {
        this.computeDomains = source;
        return this;
    }

    private ComputeDomainStatus computeDomains() {
        Supplier<ComputeDomainStatus> s = computeDomains;
        if (s == null) {
            return null;
        }
        try {
            return s.get();
        } catch (RuntimeException e) {
            return new ComputeDomainStatus(ComputeDomainStatus.ERROR, String.valueOf(e), java.util.List.of(),
                    Instant.now());
        }
    }

    private volatile Supplier<CliqueLabel> cliqueLabel;
    private volatile ComputeDomainStatus computeDomainsSeen;
    private volatile CliqueLabel cliqueLabelSeen;

    /**
     * Asks the Kubernetes sources (each cached: the API at most once per its interval) on the caller's thread.
     * NodeService calls this before it builds a report on the driver pool, so that a slow API server neither holds
     * a driver thread nor passes for a hung driver call (TIMEOUT, imexprobe_driver_calls_stuck).
     */
    public void readCluster() {
        computeDomainsSeen = computeDomains();
        cliqueLabelSeen = cliqueLabel();
    }

    /** The last answer readCluster got; read here only when it never ran (a report built directly). */
    private ComputeDomainStatus seenComputeDomains() {
        ComputeDomainStatus s = computeDomainsSeen;
        return s != null ? s : computeDomains();
    }

    private CliqueLabel seenLabel() {
        CliqueLabel l = cliqueLabelSeen;
        return l != null ? l : cliqueLabel();
    }

    /** This Node's nvidia.com/gpu.clique label (imexprobe.cliquelabel.enabled); cached by the source. */
    public NodeReporter cliqueLabel(Supplier<CliqueLabel> source) {
        this.cliqueLabel = source;
        return this;
    }

    private CliqueLabel cliqueLabel() {
        Supplier<CliqueLabel> s = cliqueLabel;
        if (s == null) {
            return null;
        }
        try {
            return s.get();
        } catch (RuntimeException e) {
            return new CliqueLabel(CliqueLabel.ERROR, null, String.valueOf(e), Instant.now());
        }
    }

    private volatile FabricJoinClock joinClock;

    /** The agent's memory of fabric states across reports, so a state that does not move becomes FABRIC_STATE_STUCK. */
    public NodeReporter joinClock(FabricJoinClock clock) {
        this.joinClock = clock;
        return this;
    }

    /**
     * imexprobe.channel.mode, shown in the report (peers read it: they do not probe into an observer). In observer
     * mode no channel by configuration is what it should be, not a fault.
     */
    public NodeReporter channelMode(String mode, boolean observer) {
        this.channelMode = mode;
        this.observer = observer;
        return this;
    }

    private java.util.List<dev.imexprobe.finding.Finding> observed(java.util.List<dev.imexprobe.finding.Finding> fs) {
        if (!observer) {
            return fs;
        }
        java.util.List<dev.imexprobe.finding.Finding> out = new java.util.ArrayList<>(fs);
        out.removeIf(f -> f.is(dev.imexprobe.finding.FindingCode.NO_IMEX_CHANNEL));
        out.add(dev.imexprobe.finding.FindingCode.OBSERVER_MODE.finding(java.util.Map.of()));
        return java.util.List.copyOf(out);
    }

    /**
     * What every container on this host shares, for node-local IMEX domains: the kernel's boot id (the same in
     * every container of a node, different on every node), the fake driver's host when it stands in, else the
     * node's name.
     */
    private String hostId(DriverStatus status) {
        Map<String, String> fake = status.fake();
        if (fake != null && fake.get("host") != null) {
            return "fake-" + fake.get("host");
        }
        try {
            String boot = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/random/boot_id"))
                    .strip();
            if (!boot.isEmpty()) {
                return boot;
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux, or /proc hidden: the node's name is the next best
        }
        return identity.node();
    }

    /** The inspector's view: the fake driver's channel and device folders when the fake is loaded. */
    NodeInspectorSettings settingsFor(DriverStatus status) {
        Map<String, String> fake = status.fake();
        if (fake == null) {
            return baseSettings;
        }
        NodeInspectorSettings s = baseSettings;
        String channelDir = fake.get("channelDir");
        if (channelDir != null && !channelDir.isBlank()) {
            s = s.withImexChannelDir(Path.of(channelDir));
        }
        String devDir = fake.get("devDir");
        if (devDir != null && !devDir.isBlank()) {
            s = s.withDevRoot(Path.of(devDir));
        }
        return s;
    }
}
