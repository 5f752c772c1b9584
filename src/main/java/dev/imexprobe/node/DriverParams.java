package dev.imexprobe.node;

import java.util.List;

/**
 * What the loaded nvidia kernel module says about itself under /proc/driver/nvidia.
 *
 * @param paramsPresent      /proc/driver/nvidia/params exists and was read
 * @param imexChannelCount   {@code ImexChannelCount}: channels the module allows (2048 measured); null when absent
 * @param createImexChannel0 {@code CreateImexChannel0}: 1 = the module creates channel0 itself (0 measured)
 * @param versionPresent     /proc/driver/nvidia/version exists
 * @param version            its first line (the kernel module's banner), null when absent
 * @param driverVersion      the version number in that line, e.g. {@code 580.159.04}
 * @param gpus               GPUs under /proc/driver/nvidia/gpus: a container runtime hides the others, so fewer
 *                           entries than the host has is evidence of isolation
 * @param error              what could not be read or parsed, and what to do; null when all was fine
 */
public record DriverParams(
        boolean paramsPresent,
        Integer imexChannelCount,
        Integer createImexChannel0,
        boolean versionPresent,
        String version,
        String driverVersion,
        List<GpuInformation> gpus,
        String error) {

    public DriverParams {
        gpus = gpus == null ? List.of() : List.copyOf(gpus);
    }

    static DriverParams failed(String error) {
        return new DriverParams(false, null, null, false, null, null, List.of(), error);
    }

    /**
     * One /proc/driver/nvidia/gpus/&lt;bus id&gt;/information file.
     *
     * @param busId       the directory name, the PCI address (e.g. {@code 0000:19:00.0})
     * @param model       {@code Model}
     * @param uuid        {@code GPU UUID}
     * @param deviceMinor {@code Device Minor}: N of /dev/nvidiaN
     * @param error       why the file could not be read, null when it was
     */
    public record GpuInformation(String busId, String model, String uuid, Integer deviceMinor, String error) {
    }
}
