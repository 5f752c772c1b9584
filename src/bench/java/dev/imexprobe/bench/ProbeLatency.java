package dev.imexprobe.bench;

import dev.imexprobe.peer.PeerHttp;
import dev.imexprobe.probe.Stage;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A full push probe (write-back on, 2 MiB) between two agents on loopback, measured by the client: GET /probe
 * on agent a with agent b as the target, over one kept-alive connection, N times after a warm-up. The caller is
 * the agents' own client ({@link PeerHttp}), the one the HTTP floor is measured with: a caller's own overhead is
 * then the floor's round trip, whatever client a user has. Also keeps the
 * stages each answer reports, so the time can be split, and times b's GET /v1/node (the identity query a probe
 * makes).
 */
final class ProbeLatency {

    /** Per-probe samples, milliseconds. */
    record Samples(double[] wall, double[] server, Map<Stage, double[]> stages, double[] node, int failures,
                   List<String> failureSamples, double[] cpuMsPerProbe) {

        double[] stageSum(boolean withTransfer) {
            double[] out = new double[wall.length];
            stages.forEach((s, v) -> {
                if (withTransfer || s != Stage.TRANSFER) {
                    for (int i = 0; i < v.length; i++) {
                        out[i] += v[i];
                    }
                }
            });
            return out;
        }
    }

    private final JsonMapper json;

    ProbeLatency(JsonMapper json) {
        this.json = json;
    }

    /** Starts both agents (in parallel) and returns them ready; their ready times are part of the figures. */
    static AgentJvm[] startPair(Bench.Settings s, Path jar, String tag, Map<String, String> env) throws Exception {
        AgentJvm a = AgentJvm.start("a" + tag, s.java(), jar, s.agentJvm(), withNode(env, "bench-a" + tag),
                AgentJvm.freePort(), s.work());
        AgentJvm b = AgentJvm.start("b" + tag, s.java(), jar, s.agentJvm(), withNode(env, "bench-b" + tag),
                AgentJvm.freePort(), s.work());
        return new AgentJvm[] {a, b};
    }

    static void awaitReady(AgentJvm[] pair) throws Exception {
        for (AgentJvm p : pair) {
            p.awaitReady(Duration.ofSeconds(180));
        }
    }

    private static Map<String, String> withNode(Map<String, String> env, String node) {
        Map<String, String> m = new LinkedHashMap<>(env);
        m.put("IMEXPROBE_NODE_NAME", node);
        return m;
    }

    Samples measure(AgentJvm a, AgentJvm b, int warmup, int n) throws IOException, InterruptedException {
        return measure(List.<AgentJvm[]>of(new AgentJvm[] {a, b}), warmup, n).getFirst();
    }

    /**
     * Probes each pair in turn, round after round (the order alternating), so that pairs of two builds see the
     * same machine at the same moments: on a shared, noisy machine that is the only fair before/after.
     */
    List<Samples> measure(List<AgentJvm[]> pairs, int warmup, int n) throws IOException, InterruptedException {
        PeerHttp client = new PeerHttp(Duration.ofSeconds(5), Duration.ofSeconds(60), 64 << 20);
        Map<String, String> accept = Map.of("Accept", "application/json");
        int k = pairs.size();
        String[] probe = new String[k];
        double[][] wall = new double[k][n];
        double[][] server = new double[k][n];
        double[][] nodeMs = new double[k][n];
        List<Map<Stage, double[]>> stages = new ArrayList<>();
        int[] failures = new int[k];
        List<List<String>> failureSamples = new ArrayList<>();
        for (int p = 0; p < k; p++) {
            probe[p] = "/probe?target=" + pairs.get(p)[1].address() + "&direction=push&writeback=true&sizeBytes=" + Payloads.SIZE;
            Map<Stage, double[]> st = new EnumMap<>(Stage.class);
            for (Stage s : Stage.values()) {
                st.put(s, new double[n]);
            }
            stages.add(st);
            failureSamples.add(new ArrayList<>());
        }
        double[][] cpu0 = new double[k][];
        double[][] cpuMs = new double[k][];
        long clientCpu0 = 0;
        try (client) {
            for (int i = -warmup; i < n; i++) {
                if (i == 0) {
                    for (int p = 0; p < k; p++) {
                        cpu0[p] = cpuOf(pairs.get(p));
                    }
                    clientCpu0 = processCpuNanos();
                }
                for (int j = 0; j < k; j++) {
                    int p = Math.floorMod(i, 2) == 0 ? j : k - 1 - j;
                    long t = System.nanoTime();
                    PeerHttp.Answer r = client.exchange(pairs.get(p)[0].address(), "GET", probe[p], null, accept);
                    long d = System.nanoTime() - t;
                    JsonNode report = json.readTree(r.body());
                    boolean pass = r.status() == 200 && "pass".equals(report.path("verdict").asString(""));
                    if (!pass) {
                        failures[p]++;
                        if (failureSamples.get(p).size() < 3) {
                            failureSamples.get(p).add(new String(r.body(), 0, Math.min(r.body().length, 600)));
                        }
                    }
                    if (i < 0) {
                        continue;
                    }
                    wall[p][i] = d / 1e6;
                    server[p][i] = report.path("durationSeconds").asDouble() * 1e3;
                    for (JsonNode st : report.path("results").path(0).path("stages")) {
                        Stage s = Stage.parse(st.path("name").asString(""));
                        if (s != null) {
                            stages.get(p).get(s)[i] = st.path("durationSeconds").asDouble() * 1e3;
                        }
                    }
                }
            }
            // CPU per measured probe: agent a (exporter, prober), agent b (importer), and this client (shared by
            // the pairs when there are several).
            double clientMs = (processCpuNanos() - clientCpu0) / 1e6 / n / k;
            for (int p = 0; p < k; p++) {
                double[] c1 = cpuOf(pairs.get(p));
                double[] c = new double[5];
                for (int j = 0; j < 4; j++) {
                    c[j < 2 ? j : j + 1] = (c1[j] - cpu0[p][j]) * 1e3 / n;
                }
                // [a total, b total, client, a system, b system]
                c[0] += c[3];
                c[1] += c[4];
                c[2] = clientMs;
                cpuMs[p] = c;
            }
            // The identity query a probe may make: b's /v1/node over a kept-alive connection.
            for (int i = -Math.min(warmup, 20); i < n; i++) {
                for (int p = 0; p < k; p++) {
                    long t = System.nanoTime();
                    PeerHttp.Answer r = client.exchange(pairs.get(p)[1].address(), "GET", "/v1/node", null, accept);
                    long d = System.nanoTime() - t;
                    if (r.status() != 200) {
                        throw new IOException("GET /v1/node answered " + r.status());
                    }
                    if (i >= 0) {
                        nodeMs[p][i] = d / 1e6;
                    }
                }
            }
        }
        List<Samples> out = new ArrayList<>();
        for (int p = 0; p < k; p++) {
            out.add(new Samples(wall[p], server[p], stages.get(p), nodeMs[p], failures[p], failureSamples.get(p),
                    cpuMs[p]));
        }
        return out;
    }

    /** a user, b user, a system, b system (seconds). */
    private static double[] cpuOf(AgentJvm[] pair) throws IOException {
        double[] a = pair[0].cpuUserSystemSeconds();
        double[] b = pair[1].cpuUserSystemSeconds();
        return new double[] {a[0], b[0], a[1], b[1]};
    }

    private static long processCpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(0L);
    }

    static Map<String, Object> figures(Samples s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("probes", s.wall().length);
        m.put("failures", s.failures());
        if (!s.failureSamples().isEmpty()) {
            m.put("failureSamples", s.failureSamples());
        }
        m.put("wall", Stats.of(s.wall()).figures());
        m.put("server", Stats.of(s.server()).figures());
        Map<String, Object> st = new LinkedHashMap<>();
        s.stages().forEach((k, v) -> st.put(k.label(), Stats.of(v).figures()));
        m.put("stages", st);
        m.put("nodeDocument", Stats.of(s.node()).figures());
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("exporterAgent", Stats.round(s.cpuMsPerProbe()[0]));
        cpu.put("importerAgent", Stats.round(s.cpuMsPerProbe()[1]));
        cpu.put("exporterAgentSystem", Stats.round(s.cpuMsPerProbe()[3]));
        cpu.put("importerAgentSystem", Stats.round(s.cpuMsPerProbe()[4]));
        cpu.put("client", Stats.round(s.cpuMsPerProbe()[2]));
        cpu.put("note", "process CPU time (user + system, /proc, 10 ms ticks) over the measured probes / probes");
        m.put("cpuMsPerProbe", cpu);
        return m;
    }
}
