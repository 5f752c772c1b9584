package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeviceNodesTest {

    @TempDir
    Path root;

    private DeviceNodes read() {
        return new NodeInspector(Fixtures.settings(root)).deviceNodes();
    }

    @Test
    void listsGpuNodesNaturallyAndAlwaysTheFixedOnes() throws Exception {
        Path dev = root.resolve("dev");
        for (String name : new String[] {"nvidia10", "nvidia2", "nvidia0", "nvidia1", "nvidiactl",
                "nvidia-modeset", "nvidia0p", "nvidia-uvm-tools", "null"}) {
            Fixtures.write(dev.resolve(name), "");
        }
        Files.createDirectories(dev.resolve("nvidia-caps-imex-channels"));

        DeviceNodes nodes = read();

        assertThat(nodes.devRoot()).isEqualTo(dev.toString());
        assertThat(nodes.nodes()).extracting(DeviceNode::name).containsExactly("nvidia-caps-imex-channels",
                "nvidia-uvm", "nvidia0", "nvidia1", "nvidia2", "nvidia10", "nvidiactl");
        DeviceNode uvm = nodes.nodes().get(1);
        assertThat(uvm.exists()).isFalse();
        assertThat(uvm.openable()).isFalse();
        assertThat(uvm.openError()).isEqualTo("does not exist");
        DeviceNode caps = nodes.nodes().getFirst();
        assertThat(caps.directory()).isTrue();
        assertThat(caps.openable()).isTrue();
        DeviceNode gpu = nodes.nodes().get(2);
        assertThat(gpu.exists()).isTrue();
        assertThat(gpu.charDevice()).isFalse();
        assertThat(gpu.major()).isNull();
        assertThat(gpu.openable()).isTrue();
        assertThat(gpu.path()).isEqualTo(dev.resolve("nvidia0").toString());
        assertThat(nodes.error()).isNull();
    }

    @Test
    void charDevicesReportNumbersAndWhetherTheyOpen() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        Path dev = root.resolve("dev");
        int noDriver = Fixtures.pick(random, Fixtures.unregisteredMajors());
        int minor = random.nextInt(4096);
        Fixtures.mknodOrSkip(dev.resolve("nvidia0"), noDriver, minor);
        Fixtures.mknodOrSkip(dev.resolve("nvidiactl"), 1, 3); // opens: it is /dev/null's number

        DeviceNodes nodes = read();

        DeviceNode gpu = nodes.nodes().stream().filter(n -> n.name().equals("nvidia0")).findFirst().orElseThrow();
        assertThat(gpu.charDevice()).isTrue();
        assertThat(gpu.major()).as("seed %d", seed).isEqualTo(noDriver);
        assertThat(gpu.minor()).as("seed %d", seed).isEqualTo(minor);
        assertThat(gpu.openable()).isFalse();
        assertThat(gpu.openError()).isEqualTo("No such device or address");
        DeviceNode ctl = nodes.nodes().stream().filter(n -> n.name().equals("nvidiactl")).findFirst().orElseThrow();
        assertThat(ctl.charDevice()).isTrue();
        assertThat(ctl.major()).isEqualTo(1);
        assertThat(ctl.minor()).isEqualTo(3);
        assertThat(ctl.openable()).isTrue();
        assertThat(ctl.openError()).isNull();
    }

    @Test
    void missingDevRootStillListsTheFixedNames() {
        DeviceNodes nodes = read();
        assertThat(nodes.error()).contains("does not exist");
        assertThat(nodes.nodes()).extracting(DeviceNode::name)
                .containsExactly("nvidia-caps-imex-channels", "nvidia-uvm", "nvidiactl");
        assertThat(nodes.nodes()).noneMatch(DeviceNode::exists);
    }
}
