package dev.imexprobe.node;

import dev.imexprobe.kubernetes.ComputeDomainStatus;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.Severity;

import java.time.Instant;
import java.util.List;

/**
 * The /v1/node document: who this agent is, what the driver and NVML say about its GPUs, what the node says
 * about channels, daemon and device nodes, and the findings that evidence supports.
 *
 * @param fake           true when the fake driver stands in: everything here is simulated
 * @param usableChannels channels the driver would honour for this process
 * @param channelMode    imexprobe.channel.mode: observer, hostPath or computeDomain (null outside the agent)
 * @param computeDomains this node's ComputeDomains from the Kubernetes API (null unless
 *                       imexprobe.computedomains.enabled)
 * @param cliqueLabel    this Node's nvidia.com/gpu.clique label and what it was used for (null unless
 *                       imexprobe.cliquelabel.enabled)
 */
public record NodeReport(AgentIdentity agent, boolean fake, DriverView driver, List<GpuDevice> gpus,
                         long usableChannels, ImexChannels imexChannels, ImexDaemon imexDaemon,
                         DriverParams driverParams, DeviceNodes deviceNodes, VisibleDevices visibleDevices,
                         List<Finding> findings, Instant inspectedAt, String channelMode,
                         ComputeDomainStatus computeDomains, CliqueLabelView cliqueLabel) {

    public NodeReport(AgentIdentity agent, boolean fake, DriverView driver, List<GpuDevice> gpus, long usableChannels,
                      ImexChannels imexChannels, ImexDaemon imexDaemon, DriverParams driverParams,
                      DeviceNodes deviceNodes, VisibleDevices visibleDevices, List<Finding> findings,
                      Instant inspectedAt, String channelMode, ComputeDomainStatus computeDomains) {
        this(agent, fake, driver, gpus, usableChannels, imexChannels, imexDaemon, driverParams, deviceNodes,
                visibleDevices, findings, inspectedAt, channelMode, computeDomains, null);
    }

    public NodeReport(AgentIdentity agent, boolean fake, DriverView driver, List<GpuDevice> gpus, long usableChannels,
                      ImexChannels imexChannels, ImexDaemon imexDaemon, DriverParams driverParams,
                      DeviceNodes deviceNodes, VisibleDevices visibleDevices, List<Finding> findings,
                      Instant inspectedAt, String channelMode) {
        this(agent, fake, driver, gpus, usableChannels, imexChannels, imexDaemon, driverParams, deviceNodes,
                visibleDevices, findings, inspectedAt, channelMode, null);
    }

    /** A report of no particular channel mode (the CLI's). */
    public NodeReport(AgentIdentity agent, boolean fake, DriverView driver, List<GpuDevice> gpus, long usableChannels,
                      ImexChannels imexChannels, ImexDaemon imexDaemon, DriverParams driverParams,
                      DeviceNodes deviceNodes, VisibleDevices visibleDevices, List<Finding> findings,
                      Instant inspectedAt) {
        this(agent, fake, driver, gpus, usableChannels, imexChannels, imexDaemon, driverParams, deviceNodes,
                visibleDevices, findings, inspectedAt, null);
    }

    /** imexprobe.channel.mode=observer: no channel by configuration, nothing probed. */
    public boolean observer() {
        return "observer".equals(channelMode);
    }

    /**
     * @param initResult the CUresult name of cuInit, e.g. CUDA_SUCCESS or CUDA_ERROR_NO_DEVICE
     * @param nvmlGpus   the UUIDs of the GPUs NVML reaches from this process: it ignores CUDA_VISIBLE_DEVICES but
     *                   not a hidden /dev/nvidiaN; null when NVML could not say
     */
    public record DriverView(boolean loaded, String library, String message, boolean nvmlLoaded, String nvmlLibrary,
                             String nvmlMessage, String driverVersion, int cudaDriverVersion, String cudaVersion,
                             String initResult, List<String> nvmlGpus) {

        public DriverView(boolean loaded, String library, String message, boolean nvmlLoaded, String nvmlLibrary,
                          String nvmlMessage, String driverVersion, int cudaDriverVersion, String cudaVersion,
                          String initResult) {
            this(loaded, library, message, nvmlLoaded, nvmlLibrary, nvmlMessage, driverVersion, cudaDriverVersion,
                    cudaVersion, initResult, null);
        }
    }

    /**
     * Whether this process has the GPU with {@code uuid}, visible to CUDA or not ({@link GpuDevice#reached}): true
     * when CUDA or NVML has it, false when its device node is not here, null when that cannot be told.
     */
    public Boolean reaches(String uuid) {
        return GpuDevice.reached(GpuDevice.holds(gpus, uuid), driver == null ? null : driver.nvmlGpus(),
                visibleDevices == null ? null : visibleDevices.set(), uuid);
    }

    /**
     * The Node label nvidia.com/gpu.clique as the API gave it.
     *
     * @param state   ok, unset, absent (no such Node), forbidden or error ({@code CliqueLabel})
     * @param domain  the label as an IMEX domain ({@code fabric:<clusterUuid>/<cliqueId>}); null when unset or malformed
     * @param usedFor the GPUs (index) whose IMEX domain came from the label: NVML had no fabric info for them
     * @param detail  why, for every state but ok (or why a set label is not used)
     */
    public record CliqueLabelView(String state, String value, String domain, List<Integer> usedFor, String detail,
                                  Instant readAt) {
    }

    public boolean hasError() {
        return findings.stream().anyMatch(f -> f.severity() == Severity.ERROR);
    }
}
