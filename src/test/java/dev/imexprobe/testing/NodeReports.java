package dev.imexprobe.testing;

import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.NvmlReturn;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.ImexDaemon;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Node reports with just what the meters read: driver versions, GPUs and their fabric, channels, daemon. */
public final class NodeReports {

    public static final String GPU0 = "GPU-11111111-0000-0000-0000-000000000000";
    public static final String GPU1 = "GPU-22222222-0000-0000-0000-000000000000";
    public static final String CLUSTER = "6a1c7b2e-0000-4000-8000-00000000c0de";

    private NodeReports() {
    }

    /** Two GPUs: GPU0 joined the fabric and is healthy, GPU1's fabric says UNHEALTHY. */
    public static NodeReport twoGpus(long channels, ImexDaemonState daemon) {
        GpuDevice g0 = inDomain(gpu(0, GPU0, new FabricInfo(3, FabricInfo.STATE_COMPLETED, 0, 7, CLUSTER, 0, 1)));
        GpuDevice g1 = inDomain(gpu(1, GPU1, new FabricInfo(3, FabricInfo.STATE_COMPLETED, 0, 7, CLUSTER, 0, 2)));
        return report(List.of(g0, g1), channels, daemon);
    }

    /** The GPU with the IMEX domain the node would give it (host "test-host"). */
    public static GpuDevice inDomain(GpuDevice g) {
        return g.withImexDomain(dev.imexprobe.probe.ImexDomain.of(g.fabric(), "test-host"));
    }

    /** One GPU whose NVML could not be asked (no fabric information at all). */
    public static NodeReport oneGpuWithoutNvml() {
        return report(List.of(gpu(0, GPU0, null)), 1, ImexDaemonState.NOT_INSTALLED);
    }

    public static NodeReport report(List<GpuDevice> gpus, long channels, ImexDaemonState daemon) {
        NodeReport.DriverView driver = new NodeReport.DriverView(true, "libcuda.so.1", null, true,
                "libnvidia-ml.so.1", null, "580.159.04", 13000, "13.0", "CUDA_SUCCESS");
        ImexDaemon d = new ImexDaemon(daemon, "test", "/etc/nvidia-imex/config.cfg", false, null, null, null, null,
                null, null);
        return new NodeReport(new AgentIdentity("agent-1", "node-a", "1.2.3"), false, driver, gpus, channels, null, d,
                null, null, null, List.of(), Instant.parse("2026-12-01T10:00:00Z"), "hostPath");
    }

    /** What an agent reports when no driver library loads: nothing else can be known. */
    public static NodeReport withoutDriver() {
        NodeReport.DriverView driver = new NodeReport.DriverView(false, "/nonexistent/libcuda.so.1",
                "cannot open shared object file", false, null, null, null, 0, null, null);
        return new NodeReport(new AgentIdentity("agent-1", "node-a", "1.2.3"), false, driver, List.of(), 0, null,
                new ImexDaemon(ImexDaemonState.NOT_INSTALLED, "test", null, false, null, null, null, null, null, null),
                null, null, null, List.of(), Instant.parse("2026-12-01T10:00:00Z"));
    }

    public static GpuDevice gpu(int index, String uuid, FabricInfo fabric) {
        return new GpuDevice(index, uuid, "NVIDIA H200", "0000:18:00.0", Map.of("fabric", 1), 2L << 20, fabric,
                fabric == null ? NvmlReturn.LIBRARY_NOT_FOUND : NvmlReturn.SUCCESS, 140L << 30, 143771L << 20);
    }
}
