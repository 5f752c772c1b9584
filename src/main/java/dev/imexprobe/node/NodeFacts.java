package dev.imexprobe.node;

import java.time.Instant;

/**
 * Everything this node can tell about IMEX without the CUDA driver. Each part is inspected on its own: a part that
 * could not be read carries its own {@code error} and the others are still there.
 *
 * @param hostname        the kernel's hostname (this process's UTS namespace), null when unknown
 * @param inspectedAt     when the inspection started
 * @param durationSeconds how long it took (bounded by the nvidia-imex-ctl timeout plus the file reads)
 * @param imexChannels    the IMEX channel directory
 * @param driverParams    the nvidia kernel module's parameters, version and GPU list
 * @param deviceNodes     the nvidia device nodes
 * @param imexDaemon      the local IMEX daemon
 * @param visibleDevices  CUDA_VISIBLE_DEVICES
 */
public record NodeFacts(
        String hostname,
        Instant inspectedAt,
        double durationSeconds,
        ImexChannels imexChannels,
        DriverParams driverParams,
        DeviceNodes deviceNodes,
        ImexDaemon imexDaemon,
        VisibleDevices visibleDevices) {
}
