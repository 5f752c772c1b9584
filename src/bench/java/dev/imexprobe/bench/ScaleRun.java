package dev.imexprobe.bench;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.NodeInspectorSettings;
import dev.imexprobe.node.NodeReporter;
import dev.imexprobe.peer.AgentSignature;
import dev.imexprobe.peer.PeerCall;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.ExportLimits;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One agent in an NVL72 domain of per-GPU agents (18 nodes × 4 GPUs): it probes 71 peers every interval and is
 * probed by 71. The 71 peers live in this JVM: each serves an agent's HTTP API on its own port (GET /v1/node
 * with a real node document, POST /v1/imports doing a real import, map, verify and write-back through the
 * project's Importer on the same driver as the agent), and each pushes one real export into the agent per
 * interval (ExportRegistry + PeerClient, signed, write-back checked), at a random point of the interval.
 * Measured on the agent only: CPU share (process CPU time / wall), RSS, /actuator/prometheus with the per-pair
 * series (the pair gauges and probe counters; stage series with pair labels only when the plan asks, as
 * {@code imexprobe.metrics.pairs=true} does), and start to ready.
 */
final class ScaleRun {

    static final String TOKEN = "bench-token-0123456789abcdef";
    private static final int NODES = 18;
    private static final int GPUS_PER_NODE = 4;

    /**
     * What to run: peers, the mesh interval, how many whole rounds to let pass before measuring (JIT, first
     * identification of every peer), how many whole intervals to measure, how many scrapes.
     */
    record Plan(int peers, Duration interval, int warmupRounds, int intervals, int scrapes, boolean pairLabels,
                int otherDomains) {
        Plan(int peers, Duration interval, int warmupRounds, int intervals, int scrapes, boolean pairLabels) {
            this(peers, interval, warmupRounds, intervals, scrapes, pairLabels, 0);
        }
    }

    /** GPUs of each other IMEX domain (an NVL72 rack each), simulated as one agent per GPU. */
    static final int DOMAIN_GPUS = 72;

    private final CudaDriver driver;
    private final JsonMapper json;

    ScaleRun(CudaDriver driver, JsonMapper json) {
        this.driver = driver;
        this.json = json;
    }

    Map<String, Object> run(Bench.Settings s, Map<String, String> env, Plan plan) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("peers", plan.peers());
        m.put("intervalSeconds", plan.interval().toMillis() / 1000.0);
        m.put("stagePairLabels", plan.pairLabels());
        m.put("topology", NODES + " nodes × " + GPUS_PER_NODE + " GPUs, one agent per GPU; this agent is node 0 GPU 0"
                + (plan.otherDomains() > 0 ? "; plus " + plan.otherDomains() + " other IMEX domains of " + DOMAIN_GPUS
                + " GPUs (their agents answer GET /v1/node with their own domain; no pair with them is probed)" : ""));
        m.put("otherDomains", plan.otherDomains());
        m.put("otherDomainPeers", plan.otherDomains() * DOMAIN_GPUS);
        Simulator sim = new Simulator(plan.peers(), plan.otherDomains() * DOMAIN_GPUS);
        try (sim; DriverExecutor pool = new DriverExecutor(16, Duration.ofSeconds(5))) {
            sim.start(pool);
            Map<String, String> agentEnv = new LinkedHashMap<>(env);
            agentEnv.put("IMEXPROBE_NODE_NAME", nodeName(0));
            agentEnv.put("IMEXPROBE_AUTH_TOKEN", TOKEN);
            agentEnv.put("IMEXPROBE_PEERS_STATIC", String.join(",", sim.addresses()));
            // The chart's default is false: the pair gauges and probe counters carry the pair, the stage series do not.
            agentEnv.put("IMEXPROBE_METRICS_PAIRS", Boolean.toString(plan.pairLabels()));
            agentEnv.put("IMEXPROBE_MESH_INTERVAL", plan.interval().toMillis() + "ms");
            try (AgentJvm agent = AgentJvm.start("scale-" + plan.interval().toSeconds() + "s", s.java(), s.jar(),
                    s.agentJvm(), agentEnv, AgentJvm.freePort(), s.work())) {
                double ready = agent.awaitReady(Duration.ofSeconds(180));
                m.put("readySeconds", Stats.round(ready));
                String agentGpu = agentGpu(agent);
                sim.pushInto(agent.address(), agentGpu, plan.interval());
                // Warm-up: the first mesh round starts at a random point of the first interval.
                long deadline = System.nanoTime() + plan.interval().multipliedBy(plan.warmupRounds() + 2).toNanos()
                        + 60_000_000_000L;
                while (sim.importsServed.get() < (long) plan.warmupRounds() * plan.peers() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                long imports0 = sim.importsServed.get();
                long pushes0 = sim.pushesOk.get();
                ThreadLedger threads = new ThreadLedger(agent.cpuSecondsByThread());
                double[] cpu0 = agent.cpuUserSystemSeconds();
                long t0 = System.nanoTime();
                // The window runs from the end of a round to the end of the plan's number of rounds after it, so it
                // holds the agent's own rounds whole: rounds are jittered (±20 % by default), and a window of fixed
                // length held one round more or less than planned in about half the runs, which moved CPU and RSS
                // by more than the builds being compared did. Bounded in case rounds stop being served.
                long target = windowTarget(imports0, plan);
                long cap = t0 + plan.interval().multipliedBy(plan.intervals() * 2L).toNanos() + 30_000_000_000L;
                List<Double> rss = new ArrayList<>();
                long nextSample = t0 + 500_000_000L;
                long nextThreads = t0 + 100_000_000L;
                while (sim.importsServed.get() < target && System.nanoTime() < cap) {
                    Thread.sleep(10);
                    long now = System.nanoTime();
                    if (now >= nextThreads) { // threads that end inside the window keep their last reading
                        threads.sample(agent.cpuSecondsByThread());
                        nextThreads += 100_000_000L;
                    }
                    if (now >= nextSample) {
                        rss.add(agent.memoryMiB()[0]);
                        nextSample += 500_000_000L;
                    }
                }
                double[] cpu1 = agent.cpuUserSystemSeconds();
                Map<String, Double> threads1 = threads.byName(agent.cpuSecondsByThread());
                long t1 = System.nanoTime();
                rss.add(agent.memoryMiB()[0]);
                m.put("windowRounds", plan.intervals());
                m.put("windowRoundsWhole", sim.importsServed.get() >= target);
                double wall = (t1 - t0) / 1e9;
                double[] mem = agent.memoryMiB();
                m.put("windowSeconds", Stats.round(wall));
                double cpu = cpu1[0] + cpu1[1] - cpu0[0] - cpu0[1];
                m.put("agentCpuSeconds", Stats.round(cpu));
                m.put("agentSystemCpuSeconds", Stats.round(cpu1[1] - cpu0[1]));
                m.put("cpuShare", Stats.round(cpu / wall));
                m.put("cpuSecondsByThread", byThread(threads1, cpu, 8));
                // Warm-up left in the window: after two 30 s rounds the JIT still compiled (0.1 s of a window on an
                // H100), after six it did not (docs/performance.md, "Session 2026-12-06 l").
                m.put("compilerCpuSeconds", Stats.round(compilerSeconds(threads1)));
                m.put("outboundProbesInWindow", sim.importsServed.get() - imports0);
                m.put("inboundPushesInWindow", sim.pushesOk.get() - pushes0);
                m.put("outboundFailed", sim.importsFailed.get());
                m.put("inboundFailed", sim.pushesFailed.get());
                if (!sim.failureSamples.isEmpty()) {
                    m.put("failureSamples", List.copyOf(sim.failureSamples));
                }
                m.put("scrape", scrape(agent, plan.scrapes()));
                m.put("jvmMemoryMiB", jvmMemoryMiB(agent.get("/actuator/prometheus")));
                m.put("mesh", mesh(agent));
                m.put("rssMiB", Stats.round(rss.stream().mapToDouble(Double::doubleValue).max().orElse(mem[0])));
                m.put("rssAtEndMiB", Stats.round(mem[0]));
                m.put("peakRssMiB", Stats.round(mem[1]));
                m.put("rssNote", "rssMiB: the largest VmRSS sampled every 0.5 s in the window; peakRssMiB: VmHWM, "
                        + "start-up included");
                m.put("threads", agent.threads());
                m.put("memory", agent.memoryBreakdown(8));
                sim.stopPushing(); // so that the agent's graceful shutdown has nothing new to wait for
            }
        }
        return m;
    }

    /** CPU seconds of the JIT's compiler threads (kernel names "C1 CompilerThre", "C2 CompilerThre"), ended or not. */
    static double compilerSeconds(Map<String, Double> byName) {
        double sum = 0;
        for (Map.Entry<String, Double> e : byName.entrySet()) {
            if (e.getKey().startsWith("C# CompilerThre")) {
                sum += e.getValue();
            }
        }
        return sum;
    }

    /**
     * Where the window's CPU went: the threads (by name, pools together; {@link ThreadLedger}) that took the most,
     * largest first, and what the rest took: the other threads, and threads that lived and ended between two readings.
     */
    static Map<String, Object> byThread(Map<String, Double> byName, double total, int top) {
        Map<String, Object> m = new LinkedHashMap<>();
        double listed = 0;
        List<Map.Entry<String, Double>> deltas = byName.entrySet().stream()
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .limit(top)
                .toList();
        for (Map.Entry<String, Double> e : deltas) {
            m.put(e.getKey(), Stats.round(e.getValue()));
            listed += e.getValue();
        }
        m.put("(the rest)", Stats.round(Math.max(0, total - listed)));
        return m;
    }

    /**
     * Outbound imports served when the window's last round has ended: the warm-up ends as a round ends (all of its
     * imports served), so the window ends after {@code intervals} more rounds of every peer.
     */
    static long windowTarget(long importsAtStart, Plan plan) {
        long rounds = Math.ceilDiv(importsAtStart, plan.peers());
        return (rounds + plan.intervals()) * plan.peers();
    }

    private String agentGpu(AgentJvm agent) throws Exception {
        return json.readTree(agent.get("/v1/node")).path("gpus").path(0).path("uuid").asString();
    }

    private Map<String, Object> scrape(AgentJvm agent, int n) throws Exception {
        URI uri = URI.create("http://" + agent.address() + "/actuator/prometheus");
        int bytes = 0;
        long series = 0;
        long pairSeries = 0;
        double first = Double.NaN;
        int errors = 0;
        String error = null;
        List<Double> okMs = new ArrayList<>();
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            for (int i = -1; i < n; i++) {
                long t = System.nanoTime();
                HttpResponse<byte[]> r = c.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                double d = (System.nanoTime() - t) / 1e6;
                if (r.statusCode() != 200) {
                    // Counted, not fatal: a failed scrape is what Prometheus would record as the target down.
                    errors++;
                    error = r.statusCode() + " " + new String(r.body(), 0, Math.min(300, r.body().length),
                            StandardCharsets.UTF_8);
                    continue;
                }
                if (i < 0) {
                    first = d;
                    continue;
                }
                okMs.add(d);
                bytes = r.body().length;
                if (series == 0) {
                    for (String line : new String(r.body(), StandardCharsets.UTF_8).split("\n")) {
                        if (!line.startsWith("#") && !line.isBlank()) {
                            series++;
                            if (line.contains("target_gpu=")) {
                                pairSeries++;
                            }
                        }
                    }
                }
            }
        }
        Map<String, Object> m = new LinkedHashMap<>(Stats.of(okMs.stream().mapToDouble(Double::doubleValue).toArray())
                .figures());
        m.put("firstMs", Stats.round(first));
        m.put("errors", errors);
        if (error != null) {
            m.put("lastError", error);
        }
        m.put("bytes", bytes);
        m.put("series", series);
        m.put("pairSeries", pairSeries);
        return m;
    }

    /**
     * The JVM's own account of its memory at the window's end (Micrometer's {@code jvm_memory_*_bytes}, summed over
     * the pools of each area): which part of the RSS is the Java heap the collector has committed, and how much of it
     * is in use. On an H100 one run's RSS read 12-20 MiB above the others' (docs/performance.md, "Session
     * 2026-12-06 l"); this says whether such a difference is the heap.
     */
    static Map<String, Object> jvmMemoryMiB(String exposition) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("heapCommitted", mib(exposition, "jvm_memory_committed_bytes", "heap"));
        m.put("heapUsed", mib(exposition, "jvm_memory_used_bytes", "heap"));
        m.put("nonHeapCommitted", mib(exposition, "jvm_memory_committed_bytes", "nonheap"));
        m.put("nonHeapUsed", mib(exposition, "jvm_memory_used_bytes", "nonheap"));
        return m;
    }

    private static double mib(String exposition, String name, String area) {
        return Stats.round(AgentJvm.sample(exposition, name, "area", area) / (1 << 20));
    }

    /** The agent's own /v1/mesh: how many pairs it keeps, by state, and the document's size. */
    private Map<String, Object> mesh(AgentJvm agent) throws Exception {
        try (HttpClient c = HttpClient.newHttpClient()) {
            long t = System.nanoTime();
            HttpResponse<byte[]> r = c.send(HttpRequest.newBuilder(URI.create("http://" + agent.address() + "/v1/mesh"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
            double ms = (System.nanoTime() - t) / 1e6;
            Map<String, Object> m = new LinkedHashMap<>();
            Map<String, Integer> byState = new java.util.TreeMap<>();
            for (JsonNode p : json.readTree(r.body()).path("pairs")) {
                byState.merge(p.path("state").asString(), 1, Integer::sum);
            }
            m.put("pairsByState", byState);
            m.put("bytes", r.body().length);
            m.put("ms", Stats.round(ms));
            return m;
        }
    }

    static String nodeName(int node) {
        return String.format("nvl72-node-%02d", node);
    }

    /** The 71 simulated peers. */
    private final class Simulator implements AutoCloseable {

        private final int peers;
        private final int otherPeers;
        private final List<MiniHttpServer> servers = new ArrayList<>();
        private final List<String> names = new ArrayList<>();
        private final AtomicLong importsServed = new AtomicLong();
        private final AtomicLong importsFailed = new AtomicLong();
        private final AtomicLong pushesOk = new AtomicLong();
        private final AtomicLong pushesFailed = new AtomicLong();
        private final List<String> failureSamples = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        private final ExecutorService work = Executors.newVirtualThreadPerTaskExecutor();
        private final Semaphore inFlight = new Semaphore(8);
        private Importer importer;
        private ExportRegistry registry;
        private PeerClient client;

        Simulator(int peers, int otherPeers) {
            this.peers = peers;
            this.otherPeers = otherPeers;
        }

        void start(DriverExecutor pool) throws Exception {
            StageEngine engine = new StageEngine(pool);
            importer = new Importer(driver, engine);
            registry = new ExportRegistry(driver, engine, new ExportLimits(Duration.ofSeconds(60), 512, 1L << 30, 64L << 30),
                    Clock.systemUTC());
            AgentSignature signature = new AgentSignature(TOKEN, Clock.systemUTC());
            client = new PeerClient(PeerClient.defaultHttp(Duration.ofSeconds(10)), json, signature::sign);
            JsonNode template = json.valueToTree(new NodeReporter(driver, NodeInspectorSettings.defaults(),
                    AgentIdentity.create("template")).report());
            for (int i = 1; i <= peers; i++) {
                int node = i / GPUS_PER_NODE;
                String name = nodeName(node);
                String uuid = Payloads.uuid(1000 + i);
                String id = String.format("%016x", ThreadLocalRandom.current().nextLong());
                ObjectNode doc = (ObjectNode) template.deepCopy();
                ((ObjectNode) doc.get("agent")).put("id", id).put("node", name);
                ArrayNode gpus = (ArrayNode) doc.get("gpus");
                ObjectNode gpu = (ObjectNode) gpus.get(0);
                gpu.put("uuid", uuid).put("index", 0);
                while (gpus.size() > 1) {
                    gpus.remove(1);
                }
                byte[] nodeBytes = json.writeValueAsBytes(doc);
                MiniHttpServer server = MiniHttpServer.start(0, (method, path, body) -> {
                    if (method.equals("GET") && path.startsWith("/v1/node")) {
                        return MiniHttpServer.Response.json(nodeBytes);
                    }
                    if (method.equals("POST") && path.equals("/v1/imports")) {
                        return MiniHttpServer.Response.json(importHere(body, name, id, uuid));
                    }
                    return new MiniHttpServer.Response(404, "application/json", "{}".getBytes(StandardCharsets.UTF_8));
                });
                servers.add(server);
                names.add(name);
            }
            // Agents of the other IMEX domains: they say who they are, in their own domain, and nothing else.
            for (int i = 0; i < otherPeers; i++) {
                int domain = 2 + i / DOMAIN_GPUS;
                String name = String.format("nvl72-rack%d-node-%02d", domain, (i % DOMAIN_GPUS) / GPUS_PER_NODE);
                ObjectNode doc = (ObjectNode) template.deepCopy();
                ((ObjectNode) doc.get("agent")).put("id", String.format("%016x", ThreadLocalRandom.current().nextLong()))
                        .put("node", name);
                ArrayNode gpus = (ArrayNode) doc.get("gpus");
                ((ObjectNode) gpus.get(0)).put("uuid", Payloads.uuid(100_000 + i)).put("index", 0)
                        .put("imexDomain", "fabric:0b0e0c0d-0000-4000-8000-0000000bec00/" + domain);
                while (gpus.size() > 1) {
                    gpus.remove(1);
                }
                byte[] nodeBytes = json.writeValueAsBytes(doc);
                servers.add(MiniHttpServer.start(0, (method, path, body) -> method.equals("GET")
                        && path.startsWith("/v1/node") ? MiniHttpServer.Response.json(nodeBytes)
                        : new MiniHttpServer.Response(404, "application/json", "{}".getBytes(StandardCharsets.UTF_8))));
            }
        }

        List<String> addresses() {
            return servers.stream().map(s -> "127.0.0.1:" + s.port()).toList();
        }

        /** What a peer agent does with a POST /v1/imports: the real import, write-back included. */
        private byte[] importHere(byte[] body, String node, String id, String uuid) {
            long start = System.nanoTime();
            JsonNode r = json.readTree(body);
            FabricHandle handle = FabricHandle.fromBase64(r.path("handle").asString());
            Long wb = r.hasNonNull("writebackSeed") ? Long.parseLong(r.get("writebackSeed").asString()) : null;
            List<StageResult> stages = importer.importFabric(handle, r.path("sizeBytes").asLong(), 0,
                    Long.parseLong(r.path("seed").asString()), wb);
            boolean pass = StageEngine.passed(stages);
            (pass ? importsServed : importsFailed).incrementAndGet();
            if (!pass && failureSamples.size() < 3) {
                failureSamples.add("import in a simulated peer: " + stages);
            }
            return json.writeValueAsBytes(new ImportReply(Verdict.of(pass), (System.nanoTime() - start) / 1e9, node, id,
                    0, uuid, stages, null));
        }

        /** Every peer pushes one export into the agent per interval, at its own random point of the interval. */
        void pushInto(String agent, String agentGpu, Duration interval) {
            for (int i = 0; i < peers; i++) {
                int peer = i;
                long offset = (long) (interval.toMillis() * ThreadLocalRandom.current().nextDouble());
                timer.scheduleAtFixedRate(() -> work.submit(() -> push(agent, agentGpu, peer)), offset,
                        interval.toMillis(), TimeUnit.MILLISECONDS);
            }
        }

        private void push(String agent, String agentGpu, int peer) {
            if (!inFlight.tryAcquire()) {
                return;
            }
            try {
                long seed = Seeds.next();
                long wb = Seeds.next();
                ExportRegistry.Created created = registry.create(0, Payloads.SIZE, seed);
                if (!created.ok()) {
                    fail("export in a simulated peer: " + created.stages());
                    return;
                }
                String id = created.export().id();
                try {
                    PeerCall<ImportReply> reply = client.postImport(agent, Payloads.importBody(
                            created.export().session().fabricHandle(), Payloads.SIZE, agentGpu, seed, wb, names.get(peer),
                            Payloads.uuid(1000 + peer + 1)));
                    if (!reply.ok() || reply.value().verdict() != Verdict.PASS) {
                        fail("push into the agent: " + (reply.ok() ? reply.value() : reply.detail()));
                        return;
                    }
                    StageResult check = registry.verify(id, wb);
                    if (check == null || !check.ok()) {
                        fail("write-back check in a simulated peer: " + check);
                        return;
                    }
                    pushesOk.incrementAndGet();
                } finally {
                    registry.release(id);
                }
            } catch (RuntimeException e) {
                fail("push into the agent: " + e);
            } finally {
                inFlight.release();
            }
        }

        private void fail(String what) {
            pushesFailed.incrementAndGet();
            if (failureSamples.size() < 3) {
                failureSamples.add(what);
            }
        }

        void stopPushing() {
            timer.shutdownNow();
        }

        @Override
        public void close() {
            timer.shutdownNow();
            work.shutdownNow();
            try {
                work.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            servers.forEach(MiniHttpServer::close);
            if (registry != null) {
                registry.close();
            }
        }
    }
}
