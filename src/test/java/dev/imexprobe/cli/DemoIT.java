package dev.imexprobe.cli;

import dev.imexprobe.testing.NativeBuild;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's run command as a newcomer runs it: `java -jar target/imexprobe.jar demo`, here for a bounded
 * time. The default topology is two NVLink domains (4 per-GPU agents with the built-in trouble; 2 per-node agents
 * of 2 GPUs) and one HGX-style node (1 agent, 2 GPUs, no NVLink fabric). The built-in trouble must show up exactly
 * where it was put, every other pair within a domain must pass, every pair across domains must be "not probed"
 * (DIFFERENT_IMEX_DOMAIN, grey), never failed, and nothing may be left behind.
 */
class DemoIT {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** Ordered pairs between agents: 10 GPUs, 90 pairs, less the 2 + 2 + 2 within the three multi-GPU agents. */
    private static final int PAIRS = 84;

    @Test
    void demoShowsTheSeedCaseAndTheChannelLessAgentAndLeavesNothingBehind() throws Exception {
        int base = DemoDomain.freeBlock(21000 + (int) (ProcessHandle.current().pid() % 2000) * 8, 7);
        // --duration runs from the agents' readiness; the mesh resolved 1.5 s after it on a quiet two-core machine.
        ProcessBuilder pb = new ProcessBuilder(NativeBuild.java(), "-jar", NativeBuild.jar().toString(), "demo",
                "--duration", "10s", "--port", Integer.toString(base));
        pb.environment().keySet().removeIf(k -> k.startsWith("IMEXPROBE_") || k.startsWith("FAKECUDA_"));
        pb.redirectErrorStream(true);
        Process demo = pb.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (Exception e) {
                lines.add("reader: " + e);
            }
        });
        HttpClient http = HttpClient.newHttpClient();
        String page = null;
        JsonNode mesh = null;
        List<ProcessHandle> agents = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
        while (System.nanoTime() < deadline && demo.isAlive()) {
            if (lines.stream().anyMatch(l -> l.startsWith("matrix page:"))) {
                demo.descendants().forEach(p -> {
                    if (!agents.contains(p)) {
                        agents.add(p);
                    }
                });
                mesh = get(http, "http://localhost:" + base + "/v1/mesh?scope=domain");
                if (mesh != null && mesh.get("pairs").size() == PAIRS && resolved(mesh)) {
                    page = text(http, "http://localhost:" + base + "/");
                    break;
                }
            }
            Thread.sleep(500);
        }
        assertThat(mesh).as("demo output so far: %s", lines).isNotNull();
        assertThat(mesh.get("fake").asBoolean()).isTrue();
        assertThat(mesh.get("pairs")).as("10 GPUs in 7 agents → 84 ordered pairs between agents: %s", mesh)
                .hasSize(PAIRS);
        assertThat(resolved(mesh)).as("every pair probed: %s", mesh).isTrue();

        Map<String, Long> byFinding = new java.util.TreeMap<>();
        java.util.Set<String> domains = new java.util.TreeSet<>();
        for (JsonNode p : mesh.get("pairs")) {
            domains.add(p.path("domain").asString());
            boolean hgx = p.get("sourceNode").asString().equals("demo-hgx") || p.get("targetNode").asString().equals("demo-hgx");
            boolean rack2 = p.get("sourceNode").asString().startsWith("demo-rack2-");
            boolean sameDomain = !hgx && rack2 == p.get("targetNode").asString().startsWith("demo-rack2-");
            if (sameDomain) {
                assertThat(p.get("state").asString()).as("%s", p).isIn("ok", "failed");
            } else {
                assertThat(p.get("state").asString()).as("%s", p).isEqualTo("not_probed");
                assertThat(p.path("targetDomain").asString()).as("%s", p).isNotEqualTo(p.path("domain").asString())
                        .isNotEmpty();
            }
            String key = p.get("state").asString() + " " + p.path("cuResult").asInt(0) + " "
                    + p.path("finding").path("code").asString("-");
            byFinding.merge(key, 1L, Long::sum);
            if (p.get("sourceNode").asString().equals("demo-node-1") && p.get("targetNode").asString().equals("demo-node-1")) {
                assertThat(p.get("cuResult").asInt()).as("the seed pair, as on two H200s").isEqualTo(801);
                assertThat(p.get("finding").get("code").asString()).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
            }
        }
        // 2 seed pairs (both directions on node 1); the channel-less agent: 3 as exporter, 3 as importer.
        // Domain 1: 4 ok; domain 2: 2 agents × 2 GPUs × 2 GPUs = 8 ok; across domains: 84 - 12 - 8 = 64, all grey.
        assertThat(byFinding).containsEntry("failed 801 SAME_NODE_EXPORTER_GPU_HIDDEN", 2L)
                .containsEntry("failed 800 CREATE_NOT_PERMITTED", 3L)
                .containsEntry("failed 800 IMPORT_NOT_PERMITTED", 3L)
                .containsEntry("ok 0 -", 12L)
                .containsEntry("not_probed 0 DIFFERENT_IMEX_DOMAIN", 64L).hasSize(5);
        assertThat(domains).as("the exporters' domains: 2 cliques of one cluster and the HGX node").hasSize(3)
                .anyMatch(d -> d.endsWith("/1")).anyMatch(d -> d.endsWith("/2")).anyMatch(d -> d.equals("host:fake-demo-hgx"));

        assertThat(page).contains("SIMULATED").contains("<table id=\"matrix\"")
                .contains("801 SAME_NODE_EXPORTER_GPU_HIDDEN").contains("800 IMPORT_NOT_PERMITTED")
                .contains("800 CREATE_NOT_PERMITTED").contains("not probed — different domain");
        assertThat(page.split("<td class=\"ok\"", -1)).hasSize(13);
        assertThat(page.split("<td class=\"failed\"", -1)).hasSize(9);
        assertThat(page.split("<h2 class=\"domain\">", -1)).as("a section per domain with pairs").hasSize(3);
        String across = page.substring(page.indexOf("<table id=\"across\""));
        across = across.substring(0, across.indexOf("</table>"));
        assertThat(across).contains("host:fake-demo-hgx").doesNotContain("failed");

        assertThat(demo.waitFor(120, TimeUnit.SECONDS)).as("demo ends after --duration").isTrue();
        reader.join(5000);
        assertThat(demo.exitValue()).as(String.join("\n", lines)).isZero();
        assertThat(agents).as("the demo started its agents as child processes").hasSizeGreaterThanOrEqualTo(7);
        assertThat(agents).allSatisfy(a -> assertThat(a.isAlive()).as("agent %d", a.pid()).isFalse());
        assertThat(lines).as("every agent stopped on SIGTERM, none had to be killed")
                .noneMatch(l -> l.startsWith("demo: agent pid"));
        assertThat(lines).contains("state files left by the agents: 0");
        String removed = lines.stream().filter(l -> l.startsWith("stopped every agent and removed ")).findFirst()
                .orElseThrow();
        assertThat(Path.of(removed.substring("stopped every agent and removed ".length()))).doesNotExist();
        assertThat(lines.stream().filter(l -> l.startsWith("finding: ")).collect(Collectors.toSet()))
                .anyMatch(l -> l.contains("SAME_NODE_EXPORTER_GPU_HIDDEN")).anyMatch(l -> l.contains("IMPORT_NOT_PERMITTED"));
    }

    /**
     * Every pair probed, and none last seen with its peer not yet listening: the demo's agents start one by one, so
     * a first round may find a peer still starting (PEER_UNREACHABLE, true then) until the next round probes it.
     */
    private static boolean resolved(JsonNode mesh) {
        for (JsonNode p : mesh.get("pairs")) {
            if (p.get("state").asString().equals("unknown")
                    || p.path("finding").path("code").asString("").equals("PEER_UNREACHABLE")) {
                return false;
            }
        }
        return true;
    }

    private static JsonNode get(HttpClient http, String url) {
        String t = text(http, url);
        return t == null ? null : JSON.readTree(t);
    }

    private static String text(HttpClient http, String url) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
                    .build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (Exception e) {
            return null;
        }
    }
}
