package dev.imexprobe.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The demo's topology as planned: NVLink domains as cliques of one cluster, and one HGX-style node-local node. */
class DemoDomainTest {

    @TempDir
    Path root;

    private static String fakeConfig(DemoDomain.DemoAgent a) throws Exception {
        return Files.readString(Path.of(a.env().get("FAKECUDA_CONFIG")));
    }

    @Test
    void theDefaultIsTwoNvlinkDomainsAndOneHgxNode() throws Exception {
        DemoCommand.Options o = DemoCommand.parse(new String[] {"--port", "30000"});
        assertThat(o.domains()).isEqualTo(2);
        List<DemoDomain.DemoAgent> agents = DemoDomain.plan(o, root, root.resolve("libs"));
        assertThat(agents).hasSize(DemoDomain.agentCount(o)).hasSize(7);
        assertThat(agents.stream().map(DemoDomain.DemoAgent::port).distinct()).hasSize(7);
        assertThat(agents.getFirst().env().get("IMEXPROBE_PEERS_STATIC").split(",")).hasSize(7);

        Map<String, List<DemoDomain.DemoAgent>> byNode = agents.stream()
                .collect(Collectors.groupingBy(DemoDomain.DemoAgent::node));
        assertThat(byNode.keySet()).containsExactlyInAnyOrder("demo-node-1", "demo-node-2", "demo-rack2-node-1",
                "demo-rack2-node-2", DemoDomain.HGX_NODE);
        // domain 1: one agent per GPU, clique 1, the built-in trouble
        for (String n : List.of("demo-node-1", "demo-node-2")) {
            assertThat(byNode.get(n)).hasSize(2).allSatisfy(a -> assertThat(a.gpu()).isNotNegative());
            assertThat(fakeConfig(byNode.get(n).getFirst())).contains("gpu.0.fabric.state=3", "gpu.1.fabric.clique=1");
        }
        // the seed node: each container's /dev holds only its own GPU's node; the other nodes limit by CUDA_VISIBLE_DEVICES
        for (DemoDomain.DemoAgent a : byNode.get("demo-node-1")) {
            Path dev = Path.of(a.env().get("FAKECUDA_DEV_DIR"));
            try (var entries = Files.list(dev)) {
                assertThat(entries.map(p -> p.getFileName().toString())).containsExactly("nvidia" + a.gpu());
            }
            assertThat(a.env()).doesNotContainKey("CUDA_VISIBLE_DEVICES");
        }
        assertThat(byNode.get("demo-node-2")).allSatisfy(a -> assertThat(a.env()).doesNotContainKey("FAKECUDA_DEV_DIR")
                .containsEntry("CUDA_VISIBLE_DEVICES", Integer.toString(a.gpu())));
        assertThat(DemoDomain.troubleAgent(agents).name()).isEqualTo("demo-node-2 GPU 1");
        // domain 2: the same cluster, clique 2, one agent per node seeing both GPUs, healthy
        String cluster = fakeConfig(byNode.get("demo-node-1").getFirst()).lines()
                .filter(l -> l.startsWith("gpu.0.fabric.cluster=")).findFirst().orElseThrow();
        for (String n : List.of("demo-rack2-node-1", "demo-rack2-node-2")) {
            DemoDomain.DemoAgent a = byNode.get(n).getFirst();
            assertThat(byNode.get(n)).hasSize(1);
            assertThat(a.gpu()).isEqualTo(-1);
            assertThat(a.env()).doesNotContainKey("CUDA_VISIBLE_DEVICES").doesNotContainKey("FAKECUDA_DEV_DIR");
            assertThat(fakeConfig(a)).contains(cluster, "gpu.0.fabric.clique=2", "gpu.1.fabric.clique=2", "gpus=2");
            assertThat(a.env().get("FAKECUDA_CHANNEL_DIR")).doesNotEndWith("no-channel");
        }
        // the HGX-style node: no NVLink fabric (NOT_SUPPORTED, as measured on the H200), so its own IMEX domain
        DemoDomain.DemoAgent hgx = byNode.get(DemoDomain.HGX_NODE).getFirst();
        assertThat(fakeConfig(hgx)).contains("host=demo-hgx", "gpu.0.fabric.state=0", "gpu.1.fabric.state=0")
                .doesNotContain("cluster=");
    }

    @Test
    void domainsAreCountedAndBounded() throws Exception {
        DemoCommand.Options three = DemoCommand.parse(new String[] {"--domains", "3", "--nodes", "3", "--gpus-per-node", "1"});
        assertThat(DemoDomain.agentCount(three)).isEqualTo(3 + 2 * 3 + 1);
        List<DemoDomain.DemoAgent> agents = DemoDomain.plan(three, root, root.resolve("libs"));
        assertThat(agents).filteredOn(a -> a.node().startsWith("demo-rack3-")).hasSize(3);
        assertThat(fakeConfig(agents.stream().filter(a -> a.node().equals("demo-rack3-node-1")).findFirst().orElseThrow()))
                .contains("gpu.0.fabric.clique=3");
        assertThatThrownBy(() -> DemoCommand.parse(new String[] {"--domains", "9"})).hasMessageContaining("1 to 8");
        assertThatThrownBy(() -> DemoCommand.parse(new String[] {"--domains", "8", "--nodes", "8", "--gpus-per-node", "8"}))
                .hasMessageContaining("at most 64");
    }
}
