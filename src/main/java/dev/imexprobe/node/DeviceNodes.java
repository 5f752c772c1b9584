package dev.imexprobe.node;

import java.util.List;

/**
 * The nvidia device nodes this process can see: {@code nvidiaN} per visible GPU, {@code nvidiactl},
 * {@code nvidia-uvm} and the {@code nvidia-caps-imex-channels} directory. The three fixed names are always listed
 * (with {@code exists=false} when absent) so a missing one is visible rather than silently left out.
 *
 * @param devRoot the /dev inspected
 * @param nodes   sorted naturally by name (nvidia2 before nvidia10)
 * @param error   why /dev could not be listed, null when it could
 */
public record DeviceNodes(String devRoot, List<DeviceNode> nodes, String error) {

    public DeviceNodes {
        nodes = nodes == null ? List.of() : List.copyOf(nodes);
    }

    static DeviceNodes failed(String devRoot, String error) {
        return new DeviceNodes(devRoot, List.of(), error);
    }
}
