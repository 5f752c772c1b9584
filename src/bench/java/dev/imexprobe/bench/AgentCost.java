package dev.imexprobe.bench;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What an agent takes from the jobs beside it, per GPU it sees: GPU memory and CPU, idle and in mesh rounds.
 * Two pairs of agents, each pair probing itself (static peers, no jitter, the default context linger), measured
 * over the same window: an idle pair whose mesh interval is an hour (measured after its first round and the
 * linger), and a pair in rounds every few seconds (measured over whole intervals). With --quick the idle pair is
 * the probe-latency pair (its mesh interval is an hour too; it has no static peers, so its first round probes
 * nothing), measured after its probes and the linger. GPU memory is each agent process's own, from {@code nvidia-smi
 * --query-compute-apps} (sampled every 100 ms; a process that holds no context is not listed: 0 MiB); the fake
 * driver has no GPU memory, so there it is reported as unavailable and only CPU and contexts are measured.
 */
final class AgentCost {

    /** The sampled GPU memory of one agent process: the largest and the smallest sample, MiB. */
    private record Memory(double maxMiB, double minMiB, int samples) {
    }

    private final JsonMapper json;

    AgentCost(JsonMapper json) {
        this.json = json;
    }

    /** @param idlePair agents already running with an hour's mesh interval, used as the idle pair; null: start one */
    Map<String, Object> run(Bench.Settings s, Map<String, String> env, AgentJvm[] idlePair) throws Exception {
        boolean smi = nvidiaSmi();
        // longer than the context linger (2 s), so that each round retains and releases
        Duration interval = Duration.ofSeconds(s.quick() ? 3 : 5);
        int rounds = s.quick() ? 1 : 6;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("gpuMemorySource", smi ? "nvidia-smi --query-compute-apps (per process, every 100 ms)"
                : "none: no nvidia-smi (the fake driver has no GPU memory)");
        List<AgentJvm> all = new ArrayList<>();
        if (idlePair != null) {
            all.addAll(List.of(idlePair));
            m.put("idlePair", "the probe-latency pair, after its probes (--quick)");
        }
        try {
            // Both pairs at once, measured over the same window: the idle pair's mesh interval is an hour.
            List<AgentJvm> idle = idlePair != null ? List.of(idlePair)
                    : startPair(s, env, Duration.ofHours(1), "idle", all);
            List<AgentJvm> busy = startPair(s, env, interval, "rounds", all);
            for (AgentJvm a : all) {
                if (idlePair == null || !idle.contains(a)) { // ready already, its ready time kept as measured
                    a.awaitReady(Duration.ofSeconds(180));
                }
            }
            int gpus = gpus(all.getFirst());
            // the first round (at start), the context linger after it (2 s by default), the JIT settling
            Thread.sleep(s.quick() ? 4000 : 12000);
            Map<Long, double[]> before = new LinkedHashMap<>();
            for (AgentJvm a : all) {
                double[] c = counters(a);
                before.put(a.pid(), new double[] {a.cpuSeconds(), c[0], c[1]});
            }
            long t0 = System.nanoTime();
            Map<Long, Memory> memory = sampleGpuMemory(all, interval.multipliedBy(rounds), smi);
            double seconds = (System.nanoTime() - t0) / 1e9;
            m.put("windowSeconds", Stats.round(seconds));
            m.put("gpusPerAgent", gpus);
            m.put("idle", figures(idle, before, memory, seconds, Duration.ofHours(1), 0, gpus));
            m.put("rounds", figures(busy, before, memory, seconds, interval, rounds, gpus));
            return m;
        } finally {
            AgentJvm.closeAll(all);
        }
    }

    /** Two agents that probe each other: static peers, no jitter, the default context linger. */
    private static List<AgentJvm> startPair(Bench.Settings s, Map<String, String> env, Duration interval, String tag,
                                                List<AgentJvm> all) throws IOException {
        int pa = AgentJvm.freePort();
        int pb = AgentJvm.freePort();
        Map<String, String> e = new LinkedHashMap<>(env);
        e.put("IMEXPROBE_MESH_INTERVAL", interval.toSeconds() + "s");
        e.put("IMEXPROBE_MESH_JITTER", "0");
        e.put("IMEXPROBE_PEERS_STATIC", "127.0.0.1:" + pa + ",127.0.0.1:" + pb);
        List<AgentJvm> pair = new ArrayList<>();
        for (int port : new int[] {pa, pb}) {
            String name = "cost-" + tag + "-" + pair.size();
            e.put("IMEXPROBE_NODE_NAME", name);
            AgentJvm a = AgentJvm.start(name, s.java(), s.jar(), s.agentJvm(), new LinkedHashMap<>(e), port,
                    s.work());
            pair.add(a);
            all.add(a);
        }
        return pair;
    }

    /** Each agent's CPU, GPU memory and context creations over the window (CPU per round where there were rounds). */
    private static Map<String, Object> figures(List<AgentJvm> pair, Map<Long, double[]> before,
                                               Map<Long, Memory> memory, double seconds, Duration interval, int rounds,
                                               int gpus) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("meshIntervalSeconds", interval.toSeconds());
        r.put("rounds", rounds);
        List<Map<String, Object>> agents = new ArrayList<>();
        for (AgentJvm a : pair) {
            double cpuMs = (a.cpuSeconds() - before.get(a.pid())[0]) * 1000;
            double[] c = counters(a);
            double contexts = c[0] - before.get(a.pid())[1];
            double probes = c[1] - before.get(a.pid())[2];
            int per = Math.max(1, gpus);
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("agent", a.address());
            one.put("cpuMsPerSecond", Stats.round(cpuMs / seconds));
            one.put("cpuMsPerSecondPerGpu", Stats.round(cpuMs / seconds / per));
            if (rounds > 0) {
                one.put("cpuMsPerRound", Stats.round(cpuMs / rounds));
                one.put("cpuMsPerRoundPerGpu", Stats.round(cpuMs / rounds / per));
            }
            one.put("contextsCreated", contexts);
            one.put("probes", probes);
            Memory mem = memory.get(a.pid());
            if (mem != null) {
                one.put("gpuMemoryMaxMiB", mem.maxMiB());
                one.put("gpuMemoryMinMiB", mem.minMiB());
                one.put("gpuMemoryMaxMiBPerGpu", Stats.round(mem.maxMiB() / per));
                one.put("gpuMemorySamples", mem.samples());
            }
            one.put("rssMiB", Stats.round(a.memoryMiB()[0]));
            agents.add(one);
        }
        r.put("agents", agents);
        return r;
    }

    /** Samples each agent's GPU memory every 100 ms over the window; without nvidia-smi it only waits. */
    private static Map<Long, Memory> sampleGpuMemory(List<AgentJvm> agents, Duration window, boolean smi)
            throws Exception {
        Map<Long, Memory> m = new LinkedHashMap<>();
        long end = System.nanoTime() + window.toNanos();
        if (!smi) {
            Thread.sleep(window.toMillis());
            return m;
        }
        for (AgentJvm a : agents) {
            m.put(a.pid(), new Memory(0, Double.MAX_VALUE, 0));
        }
        while (System.nanoTime() < end) {
            Map<Long, Double> used = computeApps();
            for (AgentJvm a : agents) {
                double mib = used.getOrDefault(a.pid(), 0.0); // not listed: no context, no memory
                Memory old = m.get(a.pid());
                m.put(a.pid(), new Memory(Math.max(old.maxMiB(), mib), Math.min(old.minMiB(), mib), old.samples() + 1));
            }
            Thread.sleep(100);
        }
        return m;
    }

    /** pid → MiB summed over GPUs, as nvidia-smi lists compute processes. */
    private static Map<Long, Double> computeApps() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("nvidia-smi", "--query-compute-apps=pid,used_memory",
                "--format=csv,noheader,nounits").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        Map<Long, Double> m = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.split(",");
            if (f.length == 2 && f[0].trim().matches("\\d+") && f[1].trim().matches("\\d+")) {
                m.merge(Long.parseLong(f[0].trim()), Double.parseDouble(f[1].trim()), Double::sum);
            }
        }
        return m;
    }

    private static boolean nvidiaSmi() {
        try {
            Process p = new ProcessBuilder("nvidia-smi", "-L").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private int gpus(AgentJvm a) throws Exception {
        JsonNode node = json.readTree(a.get("/v1/node"));
        return node.path("gpus").size();
    }

    /**
     * The agent's own counts, summed over their series: primary contexts it created
     * (imexprobe_cuda_context_creations_total) and probes it made (imexprobe_probes_total).
     */
    private static double[] counters(AgentJvm a) throws Exception {
        String text = a.get("/actuator/prometheus");
        double created = AgentJvm.sample(text, "imexprobe_cuda_context_creations_total");
        double probes = AgentJvm.sample(text, "imexprobe_probes_total");
        return new double[] {Double.isNaN(created) ? 0 : created, Double.isNaN(probes) ? 0 : probes};
    }
}
