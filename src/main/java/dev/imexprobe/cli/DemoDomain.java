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
 * What the demo's simulated domain is: its agents, their ports and the fake driver's environment of each,
 * the built-in trouble included. Pure apart from the folders it makes, so a test can check it.
 */
final class DemoDomain {

    private DemoDomain() {
    }

    /** One agent of the simulated domain. */
    record DemoAgent(String node, int gpu, int port, Map<String, String> env) {
        String address() {
            return "localhost:" + port;
        }
    }

    /** The agents to start and their environments: pure, so a test can check the plan. */
    static List<DemoAgent> plan(DemoCommand.Options o, Path root, Path fakeLibs) throws IOException {
        Path state = Files.createDirectories(root.resolve("state"));
        String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
        String cluster = "d3e0c0de-0000-4000-8000-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(6));
        List<String> all = new ArrayList<>();
        for (int i = 0; i < o.nodes() * o.gpusPerNode(); i++) {
            all.add("localhost:" + (o.port() + i));
        }
        List<DemoAgent> agents = new ArrayList<>();
        for (int n = 0; n < o.nodes(); n++) {
            String node = "demo-node-" + (n + 1);
            Path nodeDir = Files.createDirectories(root.resolve(node));
            Path channels = Files.createDirectories(nodeDir.resolve("channels"));
            Files.writeString(channels.resolve("channel0"), "");
            Path noChannel = Files.createDirectories(nodeDir.resolve("no-channel"));
            List<String> config = new ArrayList<>(List.of("host=" + node, "gpus=" + o.gpusPerNode()));
            for (int g = 0; g < o.gpusPerNode(); g++) {
                // One NVLink domain: every GPU joined the same clique, so imports across nodes work.
                config.add("gpu." + g + ".fabric.state=3");
                config.add("gpu." + g + ".fabric.cluster=" + cluster);
                config.add("gpu." + g + ".fabric.clique=1");
                config.add("gpu." + g + ".fabric.summary=1");
            }
            Path cfg = nodeDir.resolve("fake.cfg");
            Files.write(cfg, config);
            for (int g = 0; g < o.gpusPerNode(); g++) {
                int index = n * o.gpusPerNode() + g;
                boolean seedNode = n == 0 && o.gpusPerNode() > 1;
                boolean channelless = n == o.nodes() - 1 && g == o.gpusPerNode() - 1 && index > 0;
                Map<String, String> env = new LinkedHashMap<>();
                env.put("IMEXPROBE_CUDA_LIBRARY", fakeLibs.resolve("libcuda.so.1").toString());
                env.put("IMEXPROBE_NVML_LIBRARY", fakeLibs.resolve("libnvidia-ml.so.1").toString());
                env.put("FAKECUDA_CONFIG", cfg.toString());
                env.put("FAKECUDA_STATE_DIR", state.toString());
                env.put("FAKECUDA_CHANNEL_DIR", (channelless ? noChannel : channels).toString());
                env.put("FAKECUDA_SAME_NODE_101", seedNode ? "1" : "0");
                env.put("CUDA_VISIBLE_DEVICES", Integer.toString(g));
                env.put("IMEXPROBE_NODE_NAME", node);
                env.put("SERVER_PORT", Integer.toString(o.port() + index));
                env.put("IMEXPROBE_AUTH_TOKEN", token);
                env.put("IMEXPROBE_PEERS_STATIC", String.join(",", all));
                env.put("IMEXPROBE_MESH_INTERVAL", o.interval().toMillis() + "ms");
                agents.add(new DemoAgent(node, g, o.port() + index, Map.copyOf(env)));
            }
        }
        return List.copyOf(agents);
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
