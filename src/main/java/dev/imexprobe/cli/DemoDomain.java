package dev.imexprobe.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the demo's simulated cluster is: its IMEX domains, agents, their ports and the fake driver's environment of
 * each, the built-in trouble included. Pure apart from the folders it makes, so a test can check it.
 */
final class DemoDomain {

    private DemoDomain() {
    }

    /** One agent of the simulated cluster; {@code gpu} is -1 for an agent that sees every GPU of its node. */
    record DemoAgent(String node, int gpu, int port, Map<String, String> env) {
        String address() {
            return "localhost:" + port;
        }

        /** "demo-node-1 GPU 0" for a per-GPU agent, the node for one that sees the whole node. */
        String name() {
            return gpu < 0 ? node : node + " GPU " + gpu;
        }
    }

    /** The name of the HGX-style node: GPUs without an NVLink fabric, an IMEX domain of their own node. */
    static final String HGX_NODE = "demo-hgx";

    /** How many agents {@link #plan} starts for these options. */
    static int agentCount(DemoCommand.Options o) {
        return o.nodes() * o.gpusPerNode() + (o.domains() - 1) * o.nodes() + 1;
    }

    /**
     * The agents to start and their environments: pure, so a test can check the plan. The topology: NVLink domain 1
     * (one cluster UUID, clique 1) is {@code nodes} × {@code gpusPerNode} with one agent per GPU and the built-in
     * trouble; NVLink domains 2..{@code domains} (cliques 2, 3, …) have {@code nodes} nodes each with one agent per
     * node seeing all its GPUs, healthy; and one HGX-style node whose GPUs report fabric state NOT_SUPPORTED, so
     * their domain is the node itself. Pairs across domains are not probed: the newcomer sees them grey.
     */
    static List<DemoAgent> plan(DemoCommand.Options o, Path root, Path fakeLibs) throws IOException {
        Path state = Files.createDirectories(root.resolve("state"));
        String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
        String cluster = "d3e0c0de-0000-4000-8000-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(6));
        List<String> all = new ArrayList<>();
        for (int i = 0; i < agentCount(o); i++) {
            all.add("localhost:" + (o.port() + i));
        }
        List<DemoAgent> agents = new ArrayList<>();
        for (int n = 0; n < o.nodes(); n++) {
            String node = "demo-node-" + (n + 1);
            Path nodeDir = Files.createDirectories(root.resolve(node));
            Path channels = channels(nodeDir);
            Path noChannel = Files.createDirectories(nodeDir.resolve("no-channel"));
            Path cfg = fakeConfig(nodeDir, node, o.gpusPerNode(), cluster, 1);
            for (int g = 0; g < o.gpusPerNode(); g++) {
                int index = n * o.gpusPerNode() + g;
                boolean seedNode = n == 0 && o.gpusPerNode() > 1;
                boolean channelless = n == o.nodes() - 1 && g == o.gpusPerNode() - 1 && index > 0;
                Map<String, String> env = env(o, fakeLibs, state, cfg, channelless ? noChannel : channels, node,
                        o.port() + index, token, all);
                if (seedNode) {
                    // The seed's containers: each /dev holds only its own GPU's node, as a container runtime
                    // builds it; importing the other GPU's memory then fails (801, as on two H200s).
                    Path dev = Files.createDirectories(nodeDir.resolve("container-gpu" + g));
                    Files.writeString(dev.resolve("nvidia" + g), "");
                    env.put("FAKECUDA_DEV_DIR", dev.toString());
                } else {
                    env.put("CUDA_VISIBLE_DEVICES", Integer.toString(g)); // all nodes present: imports work
                }
                agents.add(new DemoAgent(node, g, o.port() + index, Map.copyOf(env)));
            }
        }
        for (int d = 2; d <= o.domains(); d++) {
            for (int n = 0; n < o.nodes(); n++) {
                String node = "demo-rack" + d + "-node-" + (n + 1);
                Path nodeDir = Files.createDirectories(root.resolve(node));
                Path cfg = fakeConfig(nodeDir, node, o.gpusPerNode(), cluster, d);
                int port = o.port() + agents.size();
                Map<String, String> env = env(o, fakeLibs, state, cfg, channels(nodeDir), node, port, token, all);
                agents.add(new DemoAgent(node, -1, port, Map.copyOf(env)));
            }
        }
        Path hgxDir = Files.createDirectories(root.resolve(HGX_NODE));
        Path hgxCfg = fakeConfig(hgxDir, HGX_NODE, o.gpusPerNode(), null, 0);
        int port = o.port() + agents.size();
        Map<String, String> env = env(o, fakeLibs, state, hgxCfg, channels(hgxDir), HGX_NODE, port, token, all);
        agents.add(new DemoAgent(HGX_NODE, -1, port, Map.copyOf(env)));
        return List.copyOf(agents);
    }

    private static Path channels(Path nodeDir) throws IOException {
        Path channels = Files.createDirectories(nodeDir.resolve("channels"));
        Files.writeString(channels.resolve("channel0"), "");
        return channels;
    }

    /**
     * The fake driver's view of one node: with a cluster, every GPU joined that NVLink cluster's clique (fabric
     * state COMPLETED), so its IMEX domain is fabric:&lt;cluster&gt;/&lt;clique&gt;; without one, state NOT_SUPPORTED as
     * on an HGX H200 (measured), so the domain is the node.
     */
    private static Path fakeConfig(Path nodeDir, String node, int gpus, String cluster, int clique) throws IOException {
        List<String> config = new ArrayList<>(List.of("host=" + node, "gpus=" + gpus));
        for (int g = 0; g < gpus; g++) {
            if (cluster == null) {
                config.add("gpu." + g + ".fabric.state=0");
                continue;
            }
            config.add("gpu." + g + ".fabric.state=3");
            config.add("gpu." + g + ".fabric.cluster=" + cluster);
            config.add("gpu." + g + ".fabric.clique=" + clique);
            config.add("gpu." + g + ".fabric.summary=1");
        }
        Path cfg = nodeDir.resolve("fake.cfg");
        Files.write(cfg, config);
        return cfg;
    }

    private static Map<String, String> env(DemoCommand.Options o, Path fakeLibs, Path state, Path cfg, Path channels,
                                           String node, int port, String token, List<String> all) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("IMEXPROBE_CUDA_LIBRARY", fakeLibs.resolve("libcuda.so.1").toString());
        env.put("IMEXPROBE_NVML_LIBRARY", fakeLibs.resolve("libnvidia-ml.so.1").toString());
        env.put("FAKECUDA_CONFIG", cfg.toString());
        env.put("FAKECUDA_STATE_DIR", state.toString());
        env.put("FAKECUDA_CHANNEL_DIR", channels.toString());
        env.put("IMEXPROBE_NODE_NAME", node);
        env.put("SERVER_PORT", Integer.toString(port));
        env.put("IMEXPROBE_AUTH_TOKEN", token);
        env.put("IMEXPROBE_PEERS_STATIC", String.join(",", all));
        env.put("IMEXPROBE_MESH_INTERVAL", o.interval().toMillis() + "ms");
        return env;
    }

    static DemoAgent troubleAgent(List<DemoAgent> agents) {
        return agents.stream().filter(a -> a.env().get("FAKECUDA_CHANNEL_DIR").endsWith("no-channel")).findFirst()
                .orElse(agents.getLast());
    }

    static boolean free(int base, int count) {
        for (int p = base; p < base + count; p++) {
            try (java.net.ServerSocket s = new java.net.ServerSocket()) {
                s.setReuseAddress(false);
                s.bind(new java.net.InetSocketAddress(p));
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    static int freeBlock(int from, int count) {
        for (int base = from; base + count < 65000; base += count) {
            if (free(base, count)) {
                return base;
            }
        }
        return -1;
    }
}
