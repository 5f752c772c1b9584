package dev.imexprobe.cli;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.json.Json;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** What the demo shows while it runs: each finding of the merged mesh, once, as it first appears. */
final class DemoWatch {

    private DemoWatch() {
    }

    /** Prints a line for each finding as it first appears in the merged mesh, until the duration ends. */
    static void watch(DemoDomain.DemoAgent first, List<Process> processes, DemoCommand.Options o, PrintStream out)
            throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        JsonMapper json = Json.MAPPER;
        Set<String> seen = new LinkedHashSet<>();
        long end = o.duration() == null ? Long.MAX_VALUE : System.nanoTime() + o.duration().toNanos();
        while (System.nanoTime() < end && processes.stream().allMatch(Process::isAlive)) {
            JsonNode mesh = get(http, json, "http://" + first.address() + "/v1/mesh?scope=domain");
            if (mesh != null) {
                for (JsonNode f : mesh.path("findings")) {
                    String line = "finding: " + f.path("code").asString() + " — " + f.path("cause").asString();
                    if (seen.add(line)) {
                        out.println(line);
                    }
                }
                for (JsonNode p : mesh.path("pairs")) {
                    if (!"failed".equals(p.path("state").asString())) {
                        continue;
                    }
                    JsonNode f = p.path("finding");
                    String line = String.format("finding: %s/%s → %s/%s: %s%s (stage %s, blame %s)",
                            p.path("sourceNode").asString(), GpuDevice.shortUuid(p.path("sourceGpu").asString()),
                            p.path("targetNode").asString(), GpuDevice.shortUuid(p.path("targetGpu").asString()),
                            p.has("cuResultName") ? p.path("cuResultName").asString() + " " : "",
                            f.path("code").asString("?"), p.path("stage").asString(), f.path("blame").asString("?"));
                    if (seen.add(line)) {
                        out.println(line);
                    }
                }
                out.flush();
            }
            Thread.sleep(Math.min(2000, Math.max(250, o.interval().toMillis())));
        }
    }

    private static JsonNode get(HttpClient http, JsonMapper json, String url) {
        try {
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
            return r.statusCode() == 200 ? json.readTree(r.body()) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
