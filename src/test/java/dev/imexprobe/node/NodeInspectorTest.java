package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class NodeInspectorTest {

    @TempDir
    Path root;

    @Test
    void defaultsAreTheHostsLocations() {
        NodeInspectorSettings settings = NodeInspectorSettings.defaults();
        assertThat(settings.procRoot()).isEqualTo(Path.of("/proc"));
        assertThat(settings.devRoot()).isEqualTo(Path.of("/dev"));
        assertThat(settings.imexChannelDir()).isEqualTo(Path.of("/dev/nvidia-caps-imex-channels"));
        assertThat(settings.imexConfig()).isEqualTo(Path.of("/etc/nvidia-imex/config.cfg"));
        assertThat(settings.imexCtl()).isNull();
        assertThat(settings.imexCtlTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(settings.imexCtlSearchPath()).contains(Path.of("/usr/bin"), Path.of("/usr/sbin"),
                Path.of("/usr/local/bin")).doesNotHaveDuplicates();
        assertThat(settings.withImexChannelDir(Path.of("/tmp/fake")).imexChannelDir()).isEqualTo(Path.of("/tmp/fake"));
    }

    @Test
    void aWholeNodeInspectsAndSerialisesAsCamelCaseJson() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int major = 234 + random.nextInt(20);
        int channel = random.nextInt(2048);
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(major));
        Fixtures.write(root.resolve("proc/sys/kernel/hostname"), "gpu-node-7\n");
        Fixtures.write(root.resolve("proc/driver/nvidia/params"), "ImexChannelCount: 2048\nCreateImexChannel0: 0\n");
        Fixtures.write(root.resolve("proc/driver/nvidia/version"),
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n");
        Fixtures.write(root.resolve("dev/nvidia-caps-imex-channels/channel" + channel), "");
        Fixtures.write(root.resolve("dev/nvidia0"), "");
        Fixtures.write(root.resolve("etc/nvidia-imex/config.cfg"), "IMEX_CMD_ENABLED=1\n");
        Path ctl = Fixtures.fakeCtl(root.resolve("bin"), "READY\n", 0, ImexDaemonTest.DOMAIN_UP);
        NodeInspectorSettings settings = Fixtures.settings(root).withImexCtl(ctl)
                .withEnv(Map.of("CUDA_VISIBLE_DEVICES", "0,GPU-8932f937"));

        NodeFacts facts = new NodeInspector(settings).inspect();

        assertThat(facts.hostname()).isEqualTo("gpu-node-7");
        assertThat(facts.inspectedAt()).isNotNull();
        assertThat(facts.durationSeconds()).isPositive().isLessThan(4);
        assertThat(facts.imexChannels().channels()).extracting(ImexChannel::number).as("seed %d", seed)
                .containsExactly(channel);
        assertThat(facts.driverParams().imexChannelCount()).isEqualTo(2048);
        assertThat(facts.deviceNodes().nodes()).extracting(DeviceNode::name).contains("nvidia0");
        assertThat(facts.imexDaemon().state()).isEqualTo(ImexDaemonState.READY);
        assertThat(facts.visibleDevices().entries()).hasSize(2);

        String json = JsonMapper.builder().build().writeValueAsString(facts);
        JsonNode tree = JsonMapper.builder().build().readTree(json);
        assertThat(tree.propertyNames()).containsExactly("hostname", "inspectedAt", "durationSeconds",
                "imexChannels", "driverParams", "deviceNodes", "imexDaemon", "visibleDevices");
        assertThat(tree.at("/imexChannels").propertyNames()).containsExactly("directory", "exists",
                "expectedMajor", "channels", "ignored", "error", "opened");
        assertThat(tree.at("/imexChannels/expectedMajor").asInt()).isEqualTo(major);
        assertThat(tree.at("/imexChannels/channels/0").propertyNames()).containsExactly("name", "number",
                "charDevice", "major", "minor", "majorMatches", "minorMatches", "readable", "readError");
        assertThat(tree.at("/imexChannels/channels/0/number").asInt()).isEqualTo(channel);
        assertThat(tree.at("/driverParams/imexChannelCount").asInt()).isEqualTo(2048);
        assertThat(tree.at("/driverParams/driverVersion").asString()).isEqualTo("580.159.04");
        assertThat(tree.at("/deviceNodes/nodes/0/charDevice").isBoolean()).isTrue();
        assertThat(tree.at("/imexDaemon/state").asString()).isEqualTo("READY");
        assertThat(tree.at("/imexDaemon/config/cmdEnabled").asBoolean()).isTrue();
        assertThat(tree.at("/imexDaemon/readiness/timedOut").isBoolean()).isTrue();
        assertThat(tree.at("/imexDaemon/domain/nodes/0/hostName").asString()).isEqualTo("node-a");
        assertThat(tree.at("/visibleDevices/entries/1/kind").asString()).isEqualTo("GPU_UUID");
        assertThat(tree.at("/inspectedAt").isString()).as("an ISO-8601 instant: " + json).isTrue();
    }

    @Test
    void eachPartFailsOnItsOwn() throws Exception {
        // No /proc at all: the proc-based parts say so; /dev and the channel directory still answer.
        Fixtures.write(root.resolve("dev/nvidia-caps-imex-channels/channel0"), "");
        Fixtures.write(root.resolve("dev/nvidiactl"), "");

        NodeFacts facts = new NodeInspector(Fixtures.settings(root).withEnv(Map.of("HOSTNAME", "from-env")))
                .inspect();

        assertThat(facts.hostname()).isEqualTo("from-env");
        assertThat(facts.driverParams().error()).contains("does not exist");
        assertThat(facts.imexChannels().error()).contains("devices does not exist");
        assertThat(facts.imexChannels().channels()).extracting(ImexChannel::name).containsExactly("channel0");
        assertThat(facts.deviceNodes().error()).isNull();
        assertThat(facts.deviceNodes().nodes()).filteredOn(DeviceNode::exists).extracting(DeviceNode::name)
                .containsExactly("nvidia-caps-imex-channels", "nvidiactl");
        assertThat(facts.imexDaemon().state()).isEqualTo(ImexDaemonState.NOT_INSTALLED);
        assertThat(facts.visibleDevices().set()).isFalse();
    }

    @Test
    void anUnexpectedExceptionBecomesThatPartsError() {
        DeviceNodes nodes = NodeInspector.guarded("device nodes", () -> {
            throw new IllegalStateException("boom");
        }, error -> DeviceNodes.failed("/dev", error));
        assertThat(nodes.nodes()).isEmpty();
        assertThat(nodes.error()).isEqualTo("inspecting device nodes failed unexpectedly "
                + "(java.lang.IllegalStateException: boom); this is a bug in imexprobe: report it with this message");
    }

    @Test
    void settingsRejectANonPositiveBound() {
        NodeInspectorSettings settings = Fixtures.settings(root);
        assertThatThrownBy(() -> settings.withImexCtlTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
        assertThat(settings.withImexCtlSearchDirs(List.of()).imexCtlSearchPath()).isEmpty();
    }
}
