package dev.imexprobe.bench;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.JniCudaDriver;
import dev.imexprobe.json.Json;
import dev.imexprobe.probe.Stage;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The benchmark harness behind bench/run.sh (docs/performance.md): probe latency against the driver and HTTP
 * floors, where a probe's time goes, copy bandwidth through an imported mapping, and one agent of a 72-GPU domain.
 * Prints one table (metric, value, goal, verdict) and writes every figure as JSON. Runs from the agent's jar
 * (PropertiesLauncher with loader.main) so it needs nothing but the Java runtime that runs the agent; not part of
 * the agent itself. Never fails on a missed goal: it reports.
 */
public final class Bench {

    /**
     * Hops onto the driver pool in one push probe, both agents together: StageEngine runs each list of stages as
     * one task — the exporter's create + export, the importer's seven stages, the exporter's write-back check and
     * its release (it was one task per stage, 11, before the bench). Keep in step with StageEngine.
     */
    static final int POOL_HOPS_PER_PUSH_PROBE = 4;

    /** What every part needs to start processes and where to put their logs. */
    record Settings(String java, Path jar, List<String> agentJvm, Path work, boolean quick) {
    }

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        int code;
        try {
            code = run(args, System.out);
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            code = 64;
        }
        System.exit(code);
    }

    /**
     * The cluster's series from one measured agent of a symmetric cluster (every agent one GPU, domains of equal
     * size): its pair series times the agents, against what the same families would be if every agent kept a pair
     * with every other GPU (all pairs, N²). Computed, not scraped by a Prometheus.
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> clusterSeries(Map<String, Object> run, int domains, int domainGpus) {
        Map<String, Object> scrape = (Map<String, Object>) run.get("scrape");
        long series = ((Number) scrape.get("series")).longValue();
        long pairSeries = ((Number) scrape.get("pairSeries")).longValue();
        int n = domains * domainGpus;
        long perPeer = Math.round(pairSeries / (double) (domainGpus - 1));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("gpus", n);
        m.put("agents", n);
        m.put("agentSeries", series);
        m.put("agentPairSeries", pairSeries);
        m.put("pairSeriesPerPeer", perPeer);
        m.put("clusterSeries", (long) n * series);
        m.put("clusterPairSeries", (long) n * pairSeries);
        m.put("clusterPairSeriesFormula", "Σ dᵢ(dᵢ-1) × families = " + domains + " × " + domainGpus + " × "
                + (domainGpus - 1) + " × " + perPeer);
        m.put("allPairsClusterPairSeries", (long) n * (n - 1) * perPeer);
        m.put("allPairsClusterSeries", (long) n * (series - pairSeries + (long) (n - 1) * perPeer));
        m.put("note", "an agent's series × " + n + " agents (one GPU each); all pairs: every agent keeping pair "
                + "series for the other " + (n - 1) + " GPUs");
        return m;
    }

    static int run(String[] args, PrintStream out) throws Exception {
        boolean quick = false;
        Path outFile = null;
        Path jar = null;
        Path floorFile = null;
        List<String> floorCommand = null;
        Path work = null;
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> agentJvm = List.of();
        Map<String, String> agentEnv = new LinkedHashMap<>();
        Set<String> sections = Set.of("http", "micro", "probe", "cost", "copy", "scale");
        // "domains" (not in the default set): one agent of a 72-GPU domain alone, then inside 8 domains (576 GPUs)
        String copySizes = null;
        int[] copyGpus = {0, 0};
        Path compareJar = null;
        int compareHops = POOL_HOPS_PER_PUSH_PROBE;
        List<String> compareJvm = null;
        // Six rounds of warm-up: after two the JIT still compiles in the window (docs/performance.md, session l).
        int[] scaleRounds = {6, 1};
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--out" -> outFile = Path.of(value(args, ++i));
                case "--jar" -> jar = Path.of(value(args, ++i));
                case "--java" -> java = value(args, ++i);
                case "--driver-floor" -> floorFile = Path.of(value(args, ++i));
                case "--driver-floor-command" -> floorCommand = Arrays.stream(value(args, ++i).trim().split("\\s+"))
                        .filter(f -> !f.isEmpty()).toList();
                case "--work" -> work = Path.of(value(args, ++i));
                case "--agent-jvm" -> agentJvm = Arrays.stream(value(args, ++i).trim().split("\\s+"))
                        .filter(s -> !s.isEmpty()).toList();
                case "--sections" -> sections = Set.of(value(args, ++i).split(","));
                case "--agent-env" -> {
                    for (String kv : value(args, ++i).trim().split("\\s+")) {
                        int eq = kv.indexOf('=');
                        if (eq > 0) {
                            agentEnv.put(kv.substring(0, eq), kv.substring(eq + 1));
                        }
                    }
                }
                case "--copy-sizes" -> copySizes = value(args, ++i);
                case "--copy-gpus" -> {
                    String[] ei = value(args, ++i).split(",");
                    if (ei.length != 2) {
                        throw new IllegalArgumentException("--copy-gpus needs EXPORTER,IMPORTER (CUDA ordinals, e.g. 0,1)");
                    }
                    copyGpus = new int[] {Integer.parseInt(ei[0].trim()), Integer.parseInt(ei[1].trim())};
                    if (copyGpus[0] < 0 || copyGpus[1] < 0) {
                        throw new IllegalArgumentException("--copy-gpus takes CUDA ordinals, 0 or more");
                    }
                }
                case "--scale-rounds" -> {
                    String[] wm = value(args, ++i).split(",");
                    scaleRounds = new int[] {Integer.parseInt(wm[0].trim()), Integer.parseInt(wm[1].trim())};
                    if (scaleRounds[0] < 1 || scaleRounds[1] < 1) {
                        throw new IllegalArgumentException("--scale-rounds needs WARMUP,MEASURED, both at least 1");
                    }
                }
                case "--compare-jar" -> compareJar = Path.of(value(args, ++i)).toAbsolutePath();
                case "--compare-hops" -> compareHops = Integer.parseInt(value(args, ++i));
                case "--compare-agent-jvm" -> compareJvm = Arrays.stream(value(args, ++i).trim().split("\\s+"))
                        .filter(f -> !f.isEmpty()).toList();
                default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
            }
        }
        if (outFile == null || jar == null || work == null) {
            throw new IllegalArgumentException("--out, --jar and --work are required (bench/run.sh passes them)");
        }
        Files.createDirectories(work);
        Settings s = new Settings(java, jar.toAbsolutePath(), agentJvm, work.toAbsolutePath(), quick);
        JsonMapper json = Json.MAPPER;
        CudaDriver driver = JniCudaDriver.get();
        if (!driver.status().cudaLoaded()) {
            System.err.println("bench: no usable driver: " + driver.status().unavailableReason());
            return 2;
        }
        driver.init();
        boolean fake = driver.status().isFake();
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("machine", machine(fake, driver, quick, s));
        if (!agentEnv.isEmpty()) {
            figures.put("agentEnv", agentEnv);
        }
        // With --quick the first floor runs while this JVM and the agents start: it is read once the probes are done.
        JsonNode floorBefore = null;
        JsonNode floor = null;
        figures.put("driverFloor", null); // its place in the file
        Map<String, String> env = new LinkedHashMap<>();
        env.put("IMEXPROBE_AUTH_TOKEN", ScaleRun.TOKEN);
        env.put("IMEXPROBE_MESH_INTERVAL", "1h");
        env.putAll(agentEnv);
        Map<String, Object> http = null;
        Map<String, Object> micro = null;
        ProbeLatency.Samples probe = null;
        List<Double> readies = new ArrayList<>();
        AgentJvm[] idleForCost = null; // --quick: the latency pair, kept as the cost section's idle pair

        // --quick starts the latency agents now, so their start overlaps the floors (quick numbers are not judged).
        AgentJvm[] early = quick && sections.contains("probe") ? ProbeLatency.startPair(s, s.jar(), "", env) : null;
        if (sections.contains("http")) {
            progress("HTTP floor");
            http = HttpFloor.run(json, quick ? 50 : 2000, quick ? 150 : 5000);
            figures.put("httpFloor", http);
            save(json, outFile, figures, true);
        }
        if (sections.contains("micro")) {
            progress("micro-measurements");
            micro = new Micro(driver, json, quick).run();
            figures.put("micro", micro);
            save(json, outFile, figures, true);
        }
        if (sections.contains("probe")) {
            int warmup = quick ? 20 : 200;
            int n = quick ? 40 : 1000;
            boolean comparing = compareJar != null || compareJvm != null;
            progress("probe latency: starting two agents" + (comparing ? " of each build or flag set" : ""));
            AgentJvm[] pair = early != null ? early : ProbeLatency.startPair(s, s.jar(), "", env);
            Settings cs = compareJvm != null ? new Settings(s.java(), s.jar(), compareJvm, s.work(), s.quick()) : s;
            AgentJvm[] other = comparing ? ProbeLatency.startPair(cs, compareJar != null ? compareJar : s.jar(),
                    "-before", env) : null;
            try {
                ProbeLatency.awaitReady(pair);
                if (other != null) {
                    ProbeLatency.awaitReady(other);
                }
                readies.add(pair[0].readySeconds());
                readies.add(pair[1].readySeconds());
                progress("probe latency: " + n + " probes after " + warmup + " for warm-up"
                        + (other != null ? ", alternating with the other build's pair" : ""));
                List<AgentJvm[]> pairs = other != null ? List.of(pair, other) : List.<AgentJvm[]>of(pair);
                List<ProbeLatency.Samples> samples = new ProbeLatency(json).measure(pairs, warmup, n);
                probe = samples.getFirst();
                Map<String, Object> pf = ProbeLatency.figures(probe);
                pf.put("readySeconds", List.of(Stats.round(pair[0].readySeconds()), Stats.round(pair[1].readySeconds())));
                // After n + warmup probes each: what an agent that both exports and imports holds.
                pf.put("memory", List.of(pair[0].memoryBreakdown(8), pair[1].memoryBreakdown(8)));
                figures.put("probe", pf);
                save(json, outFile, figures, true);
                if (other != null) {
                    Map<String, Object> cf = ProbeLatency.figures(samples.get(1));
                    cf.put("jar", String.valueOf(compareJar != null ? compareJar : s.jar()));
                    cf.put("agentJvmFlags", String.join(" ", cs.agentJvm()));
                    cf.put("memory", List.of(other[0].memoryBreakdown(8), other[1].memoryBreakdown(8)));
                    figures.put("probeCompare", cf);
                    if (floor != null && http != null) {
                        figures.put("breakdownCompare", breakdown(samples.get(1), floor, http, micro, compareHops));
                    }
                }
            } finally {
                List<AgentJvm> all = new ArrayList<>(List.of(pair));
                if (other != null) {
                    all.addAll(List.of(other));
                }
                // Its mesh interval is an hour, as the idle pair's: --quick saves two agent starts (~13 s in CI).
                if (probe != null && quick && other == null && sections.contains("cost")) {
                    idleForCost = pair;
                    all.removeAll(List.of(pair));
                }
                AgentJvm.closeAll(all);
            }
        }
        if (floorFile != null) {
            floorBefore = awaitFloor(json, floorFile);
            floor = floorBefore;
            figures.put("driverFloor", floor);
        }
        if (probe != null && floorBefore != null && floorCommand != null) {
            progress("driver floor, after the probes");
            JsonNode after = runFloor(json, floorCommand, s.work().resolve("floor-after.json"));
            floor = DriverFloor.combine(json, floorBefore, after);
            figures.put("driverFloor", floor);
            save(json, outFile, figures, true);
        }
        if (probe != null && floor != null && http != null) {
            figures.put("breakdown", breakdown(probe, floor, http, micro, POOL_HOPS_PER_PUSH_PROBE));
        }
        if (sections.contains("cost")) {
            progress("cost beside jobs: an idle pair and a pair in rounds, GPU memory and CPU per agent");
            figures.put("cost", new AgentCost(json).run(s, env, idleForCost));
            save(json, outFile, figures, true);
        }
        if (sections.contains("copy")) {
            List<Long> sizes = CopyBandwidth.parseSizes(copySizes != null ? copySizes
                    : fake ? (quick ? "16M" : "16M,64M") : (quick ? "256M" : "256M,1G"));
            progress("copy bandwidth " + sizes);
            figures.put("copy", new CopyBandwidth(driver, json, copyGpus[0], copyGpus[1]).run(s, sizes, quick ? 2 : 5, quick ? 3 : 7));
            save(json, outFile, figures, true);
        }
        if (sections.contains("scale")) {
            List<Map<String, Object>> runs = new ArrayList<>();
            if (!quick) {
                progress("scale: 71 peers, 30 s interval, " + scaleRounds[0] + " rounds of warm-up, " + scaleRounds[1]
                        + " intervals measured (about " + (scaleRounds[0] + scaleRounds[1] + 1) / 2 + " minutes)");
                runs.add(new ScaleRun(driver, json).run(s, env, new ScaleRun.Plan(71, Duration.ofSeconds(30),
                        scaleRounds[0], scaleRounds[1], 30, false)));
                figures.put("scale", runs);
                save(json, outFile, figures, true);
            }
            Duration compressed = Duration.ofSeconds(quick ? 2 : 3);
            progress("scale: 71 peers, interval compressed to " + compressed.toSeconds() + " s");
            runs.add(new ScaleRun(driver, json).run(s, env, new ScaleRun.Plan(71, compressed, quick ? 1 : 3,
                    quick ? 2 : 5, quick ? 3 : 30, false)));
            if (floor != null) {
                JsonNode measured = floor;
                runs.forEach(r -> driverShare(r, measured));
            }
            figures.put("scale", runs);
            if (runs.size() == 2) {
                figures.put("domain576", domainEstimate(runs.get(0), runs.get(1)));
            }
        }
        if (sections.contains("domains")) {
            Duration interval = Duration.ofSeconds(quick ? 2 : 3);
            int warmup = quick ? 1 : 3;
            int measured = quick ? 2 : 5;
            Map<String, Object> d = new LinkedHashMap<>();
            progress("domains: one agent of a 72-GPU domain, alone (71 peers), interval " + interval.toSeconds() + " s");
            Map<String, Object> alone = new ScaleRun(driver, json).run(s, env, new ScaleRun.Plan(71, interval, warmup,
                    measured, quick ? 3 : 20, false, 0));
            d.put("oneDomain", alone);
            figures.put("domains", d);
            save(json, outFile, figures, true);
            progress("domains: the same agent inside 8 domains of 72 (575 peers, 504 in other domains)");
            Map<String, Object> eight = new ScaleRun(driver, json).run(s, env, new ScaleRun.Plan(71, interval, warmup,
                    measured, quick ? 3 : 20, false, 7));
            d.put("eightDomains", eight);
            d.put("cluster576", clusterSeries(eight, 8, ScaleRun.DOMAIN_GPUS));
            figures.put("domains", d);
            save(json, outFile, figures, true);
        }
        figures.put("loadAverageAtEnd", loadAverage());
        List<Row> rows = table(figures, fake, quick, readies);
        List<Map<String, Object>> goals = new ArrayList<>();
        for (Row r : rows) {
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("metric", r.metric());
            g.put("value", r.value());
            g.put("goal", r.goal());
            g.put("verdict", r.verdict());
            goals.add(g);
        }
        figures.put("table", goals);
        print(rows, out, fake, quick);
        save(json, outFile, figures, false);
        out.println("figures: " + outFile);
        return 0;
    }

    /**
     * Writes the figures so far; {@code partial} marks a file written between sections, so that a run cut short
     * (a GPU lease running out) keeps what it measured.
     */
    private static void save(JsonMapper json, Path outFile, Map<String, Object> figures, boolean partial)
            throws IOException {
        Map<String, Object> doc = figures;
        if (partial) {
            doc = new LinkedHashMap<>(figures);
            doc.put("partial", "written after a section; the run had not finished");
        }
        Path parent = outFile.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Path tmp = outFile.resolveSibling(outFile.getFileName() + ".tmp");
        Files.writeString(tmp, json.rebuild().enable(SerializationFeature.INDENT_OUTPUT).build()
                .writeValueAsString(doc) + "\n");
        Files.move(tmp, outFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** The first floor's figures, once bench/run.sh has them (it writes floor.json, or floor.failed). */
    private static JsonNode awaitFloor(JsonMapper json, Path file) throws Exception {
        Path failed = file.resolveSibling("floor.failed");
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (!Files.exists(file)) {
            if (Files.exists(failed) || System.nanoTime() > deadline) {
                throw new IOException("the driver floor did not finish (see its message above)");
            }
            Thread.sleep(50);
        }
        return json.readTree(file.toFile());
    }

    /** Runs bench/driver_floor (built by bench/run.sh) again, with the environment this JVM got. */
    private static JsonNode runFloor(JsonMapper json, List<String> command, Path out) throws Exception {
        List<String> cmd = new ArrayList<>(command);
        cmd.add("--out");
        cmd.add(out.toString());
        Process p = AgentJvm.track(new ProcessBuilder(cmd).inheritIO().start());
        try {
            if (p.waitFor() != 0) {
                throw new IOException("the driver floor failed the second time (exit " + p.exitValue() + ")");
            }
        } finally {
            AgentJvm.untrack(p);
        }
        return json.readTree(out.toFile());
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    private static void progress(String what) {
        System.err.println("bench: " + what + " (" + Instant.now().toString().substring(11, 19) + ", load "
                + loadAverage() + ")");
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    private static Map<String, Object> machine(boolean fake, CudaDriver driver, boolean quick, Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        try {
            m.put("hostname", InetAddress.getLocalHost().getHostName());
        } catch (IOException e) {
            m.put("hostname", "?");
        }
        m.put("date", Instant.now().toString());
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        m.put("cpuModel", cpuModel());
        m.put("loadAverageAtStart", loadAverage());
        m.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("driver", fake ? "fake (native/fake): simulated, no GPU" : "real");
        m.put("cudaLibrary", driver.status().cudaLibrary());
        m.put("quick", quick);
        m.put("agentJvmFlags", String.join(" ", s.agentJvm()));
        return m;
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("?");
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * Where a probe's time goes (medians, ms), from the client's wall time, the stages the agents report, the
     * floors and the micro-measurements. See docs/performance.md for how each share is derived.
     */
    static Map<String, Object> breakdown(ProbeLatency.Samples p, JsonNode floor, Map<String, Object> http,
                                         Map<String, Object> micro, int hops) {
        double wall = Stats.median(p.wall());
        double driverFloor = floor.path("total").path("p50").asDouble();
        double httpFloor = ((Number) http.get("p50")).doubleValue();
        double stagesNoTransfer = Stats.median(p.stageSum(false));
        double transfer = Stats.median(p.stages().get(Stage.TRANSFER));
        double[] outer = new double[p.wall().length];
        double[] prober = new double[p.wall().length];
        double[] all = p.stageSum(true);
        for (int i = 0; i < outer.length; i++) {
            outer[i] = p.wall()[i] - p.server()[i];
            prober[i] = p.server()[i] - all[i];
        }
        double hopMs = micro == null ? 0 : ((Number) micro.get("driverPoolHopUs")).doubleValue() / 1e3;
        double scheduling = hops * hopMs;
        double jniJava = stagesNoTransfer - driverFloor - scheduling;
        // HTTP round trips per probe: the client's /probe and the POST /v1/imports, plus GET /v1/node when the
        // prober asks the target who it is (measured: node document round trip on b).
        double nodeDoc = Stats.median(p.node());
        double identifyShare = Math.max(0, Stats.median(prober));
        Map<String, Object> js = micro == null ? Map.of() : cast(micro.get("json"));
        double jsonMs = (num(js, "importBodyWriteUs") + num(js, "importBodyReadUs") + num(js, "importReplyWriteUs")
                + num(js, "importReplyReadUs") + num(js, "probeReportWriteUs")) / 1e3;
        double httpMs = 2 * httpFloor;
        double rest = wall - driverFloor - jniJava - scheduling - httpMs - jsonMs - identifyShare;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("method", "medians of per-probe values; shares do not add up exactly (medians of parts), 'rest' takes "
                + "the difference");
        m.put("wallMs", Stats.round(wall));
        Map<String, Object> shares = new LinkedHashMap<>();
        shares.put("driver (C floor)", Stats.round(driverFloor));
        shares.put("JNI + Java stage code", Stats.round(jniJava));
        shares.put("driver-pool scheduling", Stats.round(scheduling));
        shares.put("HTTP (2 round trips at the floor)", Stats.round(httpMs));
        shares.put("JSON (bodies of /probe and /v1/imports)", Stats.round(jsonMs));
        shares.put("prober outside stages (identify GET /v1/node, stitching, diagnosis)", Stats.round(identifyShare));
        shares.put("rest (Tomcat, Spring MVC, auth, controllers, client)", Stats.round(rest));
        m.put("sharesMs", shares);
        Map<String, Object> parts = new LinkedHashMap<>();
        parts.put("clientToAgentOutsideProbeMs", Stats.round(Stats.median(outer)));
        parts.put("proberOutsideStagesMs", Stats.round(identifyShare));
        parts.put("driverStagesMs", Stats.round(stagesNoTransfer));
        parts.put("transferMs", Stats.round(transfer));
        parts.put("nodeDocumentRoundTripMs", Stats.round(nodeDoc));
        parts.put("poolHopsPerProbe", hops);
        m.put("partsMs", parts);
        // CPU, not wall: what both agents burnt per probe against what the C floor's two processes burnt.
        double agentsCpu = p.cpuMsPerProbe()[0] + p.cpuMsPerProbe()[1];
        double floorCpu = floor.path("cpuMsPerIteration").path("exporter").asDouble(Double.NaN)
                + floor.path("cpuMsPerIteration").path("importer").asDouble(Double.NaN);
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("agentsMs", Stats.round(agentsCpu));
        cpu.put("driverFloorMs", Stats.round(floorCpu));
        cpu.put("beyondTheFloorMs", Stats.round(agentsCpu - floorCpu));
        double agentsSys = p.cpuMsPerProbe()[3] + p.cpuMsPerProbe()[4];
        double floorSys = floor.path("cpuMsPerIteration").path("exporterSystem").asDouble(Double.NaN)
                + floor.path("cpuMsPerIteration").path("importerSystem").asDouble(Double.NaN);
        cpu.put("agentsSystemMs", Stats.round(agentsSys));
        cpu.put("driverFloorSystemMs", Stats.round(floorSys));
        cpu.put("clientMs", Stats.round(p.cpuMsPerProbe()[2]));
        m.put("cpuPerProbe", cpu);
        String largest = null;
        double max = -1;
        for (Map.Entry<String, Object> e : shares.entrySet()) {
            double v = ((Number) e.getValue()).doubleValue();
            if (v > max) {
                max = v;
                largest = e.getKey();
            }
        }
        m.put("largest", largest);
        return m;
    }

    /**
     * How much of the agent's CPU in a scale window was the driver's own work, as the C floor measured it per
     * exchange (exporter side for each of its mesh probes, importer side for each push it received). On the fake
     * driver that work is memcpy through process_vm_readv and page faults; on a GPU, pageable host copies.
     */
    private static void driverShare(Map<String, Object> r, JsonNode floor) {
        double exporter = floor.path("cpuMsPerIteration").path("exporter").asDouble(Double.NaN);
        double importer = floor.path("cpuMsPerIteration").path("importer").asDouble(Double.NaN);
        if (!Double.isFinite(exporter) || !Double.isFinite(importer)) {
            return;
        }
        long out = ((Number) r.get("outboundProbesInWindow")).longValue();
        long in = ((Number) r.get("inboundPushesInWindow")).longValue();
        double driverSeconds = (out * exporter + in * importer) / 1e3;
        double agentSeconds = ((Number) r.get("agentCpuSeconds")).doubleValue();
        double window = ((Number) r.get("windowSeconds")).doubleValue();
        r.put("driverCpuSecondsByTheFloor", Stats.round(driverSeconds));
        r.put("cpuShareWithoutDriverWork", Stats.round(Math.max(0, agentSeconds - driverSeconds) / window));
        r.put("agentCpuMsPerExchange", Stats.round(agentSeconds * 1e3 / Math.max(1, out + in)));
    }

    /**
     * The agent's CPU as idle share + exchanges per second × CPU per exchange, fitted through the two scale runs
     * (30 s and compressed), and what that gives for one agent of a 576-GPU domain (one agent per GPU) probing k
     * peers per 30 s round chosen by rendezvous hashing, and so probed by about k: 2k exchanges per interval.
     */
    static Map<String, Object> domainEstimate(Map<String, Object> slow, Map<String, Object> fast) {
        double rateA = exchanges(slow) / num(slow, "windowSeconds");
        double rateB = exchanges(fast) / num(fast, "windowSeconds");
        double shareA = num(slow, "cpuShare");
        double shareB = num(fast, "cpuShare");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("method", "cpuShare = idle + exchangesPerSecond x cpuPerExchange through the two scale runs; one agent "
                + "per GPU, k peers per 30 s round out and about k in");
        if (!(rateB > rateA) || !Double.isFinite(shareA) || !Double.isFinite(shareB)) {
            m.put("skipped", "the two scale runs do not differ in rate");
            return m;
        }
        double perExchange = (shareB - shareA) / (rateB - rateA);
        double idle = shareA - rateA * perExchange;
        m.put("cpuMsPerExchange", Stats.round(perExchange * 1e3));
        m.put("idleShare", Stats.round(idle));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int k : new int[] {575, 71, 32, 16, 8}) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("peersPerRound", k);
            r.put("exchangesPer30s", 2 * k);
            r.put("cpuShare", Stats.round(Math.max(0, idle) + 2.0 * k / 30 * perExchange));
            rows.add(r);
        }
        m.put("subsets", rows);
        return m;
    }

    private static double exchanges(Map<String, Object> run) {
        return num(run, "outboundProbesInWindow") + num(run, "inboundPushesInWindow");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Object o) {
        return (Map<String, Object>) o;
    }

    private static double num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v instanceof Number n ? n.doubleValue() : 0;
    }

    /** One line of the table. */
    record Row(String metric, String value, String goal, String verdict) {
    }

    @SuppressWarnings("unchecked")
    static List<Row> table(Map<String, Object> f, boolean fake, boolean quick, List<Double> readies) {
        List<Row> rows = new ArrayList<>();
        JsonNode floor = (JsonNode) f.get("driverFloor");
        Map<String, Object> http = (Map<String, Object>) f.get("httpFloor");
        Map<String, Object> probe = (Map<String, Object>) f.get("probe");
        double floorP50 = floor == null ? Double.NaN : floor.path("total").path("p50").asDouble();
        if (floor != null) {
            JsonNode runs = floor.path("runs");
            String both = runs.size() == 2 ? String.format(Locale.ROOT, " (p50 before the probes %.3f, after %.3f)",
                    runs.get(0).path("total").path("p50").asDouble(), runs.get(1).path("total").path("p50").asDouble())
                    : "";
            rows.add(new Row("driver floor p50 / p99 (C, 2 processes)", ms(floorP50) + " / "
                    + ms(floor.path("total").path("p99").asDouble()) + both + String.format(Locale.ROOT,
                    "; CPU %.2f + %.2f ms", floor.path("cpuMsPerIteration").path("exporter").asDouble(),
                    floor.path("cpuMsPerIteration").path("importer").asDouble()), "", "info"));
        }
        double httpP50 = http == null ? Double.NaN : ((Number) http.get("p50")).doubleValue();
        if (http != null) {
            rows.add(new Row("HTTP floor p50 / p99 (" + (String.valueOf(http.get("server")).startsWith("jdk") ? "JDK HttpServer"
                    : "socket server") + ")", ms(httpP50) + " / " + ms(((Number) http.get("p99")).doubleValue()), "", "info"));
        }
        if (probe != null) {
            Map<String, Object> wall = (Map<String, Object>) probe.get("wall");
            double p50 = ((Number) wall.get("p50")).doubleValue();
            rows.add(new Row("probe p50 / p99 (push, write-back, 2 MiB)", ms(p50) + " / "
                    + ms(((Number) wall.get("p99")).doubleValue()), "", (Integer) probe.get("failures") == 0 ? "info"
                    : probe.get("failures") + " FAILED"));
            if (floor != null && http != null) {
                double ratio = p50 / (floorP50 + httpP50);
                f.put("ratio", Map.of("value", Stats.round(ratio), "goal", 1.5));
                rows.add(new Row("probe p50 / (driver floor + HTTP floor)", String.format(Locale.ROOT, "%.2f", ratio),
                        "≤ 1.5", ratio <= 1.5 ? "pass" : "MISS"));
            }
        }
        Map<String, Object> compare = (Map<String, Object>) f.get("probeCompare");
        if (compare != null && probe != null) {
            Map<String, Object> before = (Map<String, Object>) compare.get("wall");
            Map<String, Object> after = (Map<String, Object>) probe.get("wall");
            rows.add(new Row("probe p50 / p99, other build (alternating with this one)", ms(((Number) before.get("p50"))
                    .doubleValue()) + " / " + ms(((Number) before.get("p99")).doubleValue()) + " → " + ms(((Number) after
                    .get("p50")).doubleValue()) + " / " + ms(((Number) after.get("p99")).doubleValue()), "", "info"));
        }
        Map<String, Object> breakdown = (Map<String, Object>) f.get("breakdown");
        if (breakdown != null) {
            Map<String, Object> shares = (Map<String, Object>) breakdown.get("sharesMs");
            String largest = (String) breakdown.get("largest");
            double wallMs = ((Number) breakdown.get("wallMs")).doubleValue();
            double v = ((Number) shares.get(largest)).doubleValue();
            rows.add(new Row("largest share of a probe", largest + ": " + ms(v) + String.format(Locale.ROOT, " (%.0f%%)",
                    100 * v / wallMs), "", "info"));
        }
        if (breakdown != null && breakdown.get("cpuPerProbe") instanceof Map<?, ?> cpu) {
            rows.add(new Row("CPU per probe: both agents / the C floor's two processes", String.format(Locale.ROOT,
                    "%.2f ms / %.2f ms, of it system %.2f / %.2f; client %.2f ms", ((Number) cpu.get("agentsMs"))
                    .doubleValue(), ((Number) cpu.get("driverFloorMs")).doubleValue(), ((Number) cpu.get("agentsSystemMs"))
                    .doubleValue(), ((Number) cpu.get("driverFloorSystemMs")).doubleValue(),
                    ((Number) cpu.get("clientMs")).doubleValue()),
                    "", "info"));
        }
        Map<String, Object> micro = (Map<String, Object>) f.get("micro");
        if (micro != null && micro.get("importerStages") instanceof Map<?, ?> hops && hops.get("savedMs") != null) {
            rows.add(new Row("importer's 7 stages: a pool hop each vs one hop (same process)", ms(((Number) hops
                    .get("oneHopPerStageMs")).doubleValue()) + " vs " + ms(((Number) hops.get("oneHopForAllMs"))
                    .doubleValue()), "", "info"));
        }
        if (micro != null && micro.get("metrics") instanceof Map<?, ?> all) {
            for (Map.Entry<?, ?> e : all.entrySet()) {
                Map<?, ?> mm = (Map<?, ?>) e.getValue();
                rows.add(new Row("metrics in one JVM, 71 pairs" + ("pairLabels".equals(e.getKey())
                        ? ", stage series per pair (opt-in)" : ", as shipped") + ": record a result / render "
                        + mm.get("series") + " series", String.format(Locale.ROOT,
                        "%.0f us / %.1f ms, %s of %s scrapes failed while recording",
                        ((Number) mm.get("recordOneResultUs")).doubleValue(), ((Number) mm.get("scrapeMs")).doubleValue(),
                        mm.get("scrapesFailedWhileRecording"), mm.get("scrapesWhileRecording")), "", "info"));
            }
        }
        Map<String, Object> cost = (Map<String, Object>) f.get("cost");
        if (cost != null) {
            for (String phase : List.of("idle", "rounds")) {
                Map<String, Object> p = (Map<String, Object>) cost.get(phase);
                StringBuilder v = new StringBuilder();
                for (Map<String, Object> a : (List<Map<String, Object>>) p.get("agents")) {
                    v.append(v.isEmpty() ? "" : "; ").append(a.get("gpuMemoryMaxMiBPerGpu") instanceof Number mib
                            ? String.format(Locale.ROOT, "%.0f MiB", mib.doubleValue()) : "GPU memory n/a");
                    v.append(String.format(Locale.ROOT, ", CPU %.1f ms/s", ((Number) a.get("cpuMsPerSecondPerGpu"))
                            .doubleValue()));
                    if (a.get("cpuMsPerRoundPerGpu") instanceof Number r) {
                        v.append(String.format(Locale.ROOT, " = %.0f ms/round", r.doubleValue()));
                    }
                    v.append(String.format(Locale.ROOT, ", %.0f contexts", ((Number) a.get("contextsCreated"))
                            .doubleValue()));
                }
                boolean idle = "idle".equals(phase);
                Object held = ((List<Map<String, Object>>) p.get("agents")).stream()
                        .map(a -> a.get("gpuMemoryMaxMiB")).filter(x -> x instanceof Number n && n.doubleValue() > 0)
                        .findAny().orElse(null);
                rows.add(new Row("agent cost per GPU, " + (idle ? "idle (mesh off)" : "in rounds every "
                        + p.get("meshIntervalSeconds") + " s") + ": GPU memory (max), CPU", v.toString(),
                        idle ? "0 MiB" : "", !idle ? "info" : cost.get("gpuMemorySource").toString().startsWith("none")
                        ? "n/a (fake)" : held == null ? "pass" : "MISS"));
            }
        }
        Map<String, Object> copy = (Map<String, Object>) f.get("copy");
        if (copy != null) {
            for (Map<String, Object> r : (List<Map<String, Object>>) copy.get("sizes")) {
                double read = ((Number) r.get("readRatio")).doubleValue();
                double write = ((Number) r.get("writeRatio")).doubleValue();
                double worst = Math.min(read, write);
                boolean peer = r.containsKey("peerToLocalGBps");
                String gpus = peer ? ", GPU " + copy.get("exporterGpu") + " → " + copy.get("importerGpu") : "";
                rows.add(new Row("copy via imported mapping" + gpus + ", " + ((Number) r.get("sizeBytes")).longValue()
                        / (1 << 20) + " MiB", peer
                        ? String.format(Locale.ROOT, "read %.1f, write %.1f, peer %.1f / %.1f GB/s = %.0f%% / %.0f%%",
                                r.get("importedToLocalGBps"), r.get("localToImportedGBps"), r.get("peerToLocalGBps"),
                                r.get("localToPeerGBps"), 100 * read, 100 * write)
                        : String.format(Locale.ROOT, "read %.1f, write %.1f, local %.1f GB/s = %.0f%% / %.0f%%",
                                r.get("importedToLocalGBps"), r.get("localToImportedGBps"), r.get("localToLocalGBps"),
                                100 * read, 100 * write), "≥ 90%", fake ? "n/a (fake)" : worst >= 0.9 ? "pass" : "MISS"));
            }
        }
        List<Map<String, Object>> scale = (List<Map<String, Object>>) f.get("scale");
        if (scale != null) {
            for (Map<String, Object> r : scale) {
                double interval = ((Number) r.get("intervalSeconds")).doubleValue();
                boolean compressed = interval < 30;
                String tag = compressed ? String.format(Locale.ROOT, " [interval %.0f s: %.0f× the 30 s load]", interval,
                        30 / interval) : " [interval 30 s]";
                double cpu = ((Number) r.get("cpuShare")).doubleValue();
                Object noDriver = r.get("cpuShareWithoutDriverWork");
                String without = noDriver instanceof Number d ? String.format(Locale.ROOT,
                        " (%.1f%% without the driver's own work)", 100 * d.doubleValue()) : "";
                rows.add(new Row("agent CPU, 71 peers out + 71 in" + tag, String.format(Locale.ROOT, "%.1f%% of a core",
                        100 * cpu) + without, "≤ 5%", compressed ? (cpu <= 0.05 ? "pass (upper bound)"
                        : "info (upper bound)") : cpu <= 0.05 ? "pass" : "MISS"));
                Map<String, Object> sc = (Map<String, Object>) r.get("scrape");
                double p50 = ((Number) sc.get("p50")).doubleValue();
                rows.add(new Row("/actuator/prometheus p50 / p99, " + sc.get("series") + " series" + tag, ms(p50) + " / "
                        + ms(((Number) sc.get("p99")).doubleValue()), "≤ 50 ms", compressed ? (p50 <= 50
                        ? "pass (upper bound)" : "info (upper bound)") : p50 <= 50 ? "pass" : "MISS"));
                double rss = ((Number) r.get("rssMiB")).doubleValue();
                rows.add(new Row("agent RSS (peak)" + tag, String.format(Locale.ROOT, "%.0f MiB (%.0f)", rss,
                        ((Number) r.get("peakRssMiB")).doubleValue()), "≤ 256 MiB", rss <= 256 ? "pass" : "MISS"));
                if (r.get("memory") instanceof Map<?, ?> mem) {
                    rows.add(new Row("agent RSS at the end, by kind" + tag, memory(mem), "", "info"));
                }
                double ready = ((Number) r.get("readySeconds")).doubleValue();
                rows.add(new Row("agent start → ready" + tag, String.format(Locale.ROOT, "%.2f s", ready), "≤ 3 s",
                        ready <= 3 ? "pass" : "MISS"));
            }
        }
        Map<String, Object> domain = (Map<String, Object>) f.get("domain576");
        if (domain != null && domain.get("subsets") instanceof List<?> subsets) {
            StringBuilder v = new StringBuilder();
            for (Object o : subsets) {
                Map<String, Object> r = (Map<String, Object>) o;
                v.append(v.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "k=%s %.1f%%", r.get("peersPerRound"),
                        100 * ((Number) r.get("cpuShare")).doubleValue()));
            }
            rows.add(new Row("estimate: agent CPU in a 576-GPU domain, k peers per 30 s round", v.toString(), "≤ 5%",
                    "estimate"));
        }
        if (f.get("probe") instanceof Map<?, ?> pf && pf.get("memory") instanceof List<?> mems && mems.size() == 2) {
            rows.add(new Row("RSS of the latency agents after the probes: exporter | importer",
                    memory((Map<?, ?>) mems.get(0)) + " | " + memory((Map<?, ?>) mems.get(1)), "", "info"));
        }
        if (!readies.isEmpty()) {
            rows.add(new Row("start → ready of the two latency agents (started together)", readies.stream()
                    .map(d -> String.format(Locale.ROOT, "%.2f s", d)).reduce((x, y) -> x + ", " + y).orElse(""), "", "info"));
        }
        return rows;
    }

    /** "anon A, file F MiB; largest: name size …" from {@link AgentJvm#memoryBreakdown}. */
    private static String memory(Map<?, ?> mem) {
        StringBuilder v = new StringBuilder(String.format(Locale.ROOT, "anon %.0f, file %.0f MiB; largest:",
                ((Number) mem.get("rssAnonMiB")).doubleValue(), ((Number) mem.get("rssFileMiB")).doubleValue()));
        if (mem.get("largestMappingsMiB") instanceof Map<?, ?> maps) {
            maps.entrySet().stream().limit(4).forEach(e -> v.append(String.format(Locale.ROOT, " %s %.0f",
                    Path.of(e.getKey().toString()).getFileName(), ((Number) e.getValue()).doubleValue())));
        }
        return v.toString();
    }

    private static String ms(double v) {
        return String.format(Locale.ROOT, "%.3f ms", v);
    }

    static void print(List<Row> rows, PrintStream out, boolean fake, boolean quick) {
        int w0 = "metric".length();
        int w1 = "value".length();
        int w2 = "goal".length();
        for (Row r : rows) {
            w0 = Math.max(w0, r.metric().length());
            w1 = Math.max(w1, r.value().length());
            w2 = Math.max(w2, r.goal().length());
        }
        String fmt = "| %-" + w0 + "s | %-" + w1 + "s | %-" + w2 + "s | %s%n";
        out.println("imexprobe bench" + (quick ? " --quick" : "") + " — driver: " + (fake
                ? "FAKE (simulated; latency and bandwidth figures say nothing about a GPU)" : "real") + "; load "
                + loadAverage());
        out.printf(fmt, "metric", "value", "goal", "verdict");
        out.printf(fmt, "-".repeat(w0), "-".repeat(w1), "-".repeat(w2), "-------");
        for (Row r : rows) {
            out.printf(fmt, r.metric(), r.value(), r.goal(), r.verdict());
        }
    }
}
