package dev.imexprobe.ship;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real Prometheus server ({@code prometheus --config.file=… --storage.tsdb.path=… --web.listen-address=…}) on a
 * free loopback port, started and stopped by a test, and the few HTTP API calls the tests need: instant and range
 * queries, active alerts, rules, targets, label values. Its log goes to a file beside its configuration.
 */
final class PrometheusServer implements AutoCloseable {

    static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final Path binary;
    private final Path dir;
    private final Path log;
    private Process process;
    private int port;

    private PrometheusServer(Path binary, Path dir) {
        this.binary = binary;
        this.dir = dir;
        this.log = dir.resolve("prometheus.log");
    }

    /** Starts Prometheus on {@code config} (already written into {@code dir}); returns at once. */
    static PrometheusServer start(Path binary, Path dir, Path config) {
        PrometheusServer p = new PrometheusServer(binary, dir);
        p.launch(config);
        return p;
    }

    private void launch(Path config) {
        port = freePort();
        List<String> cmd = List.of(binary.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + port,
                "--storage.tsdb.retention.time=1h", "--log.level=debug"); // debug: each failed scrape and its error
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits for /-/ready; a port taken between choosing and binding gets one more try on another port. */
    PrometheusServer awaitReady(Path config) {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        boolean retried = false;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                if (!retried && logText().contains("address already in use")) {
                    retried = true;
                    launch(config);
                    continue;
                }
                throw new IllegalStateException("prometheus exited with " + process.exitValue() + "; log " + log
                        + ":\n" + logText());
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri("/-/ready"))
                        .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return this;
                }
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            sleep(200);
        }
        throw new IllegalStateException("prometheus not ready within " + READY_TIMEOUT + "; log " + log + ":\n"
                + logText());
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + port + pathAndQuery);
    }

    Path log() {
        return log;
    }

    String logText() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Prometheus's own words on every scrape that failed so far ({@code msg="Scrape failed"}, logged at debug): the
     * target and the error, which /api/v1/targets keeps only until the next scrape.
     */
    List<String> scrapeFailures() {
        return logText().lines().filter(l -> l.contains("msg=\"Scrape failed\"")).toList();
    }

    /** GET an API path; returns {@code data} of a {@code status: success} answer, else fails with the answer. */
    JsonNode api(String pathAndQuery) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri(pathAndQuery))
                    .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
            JsonNode body = JSON.readTree(r.body());
            if (r.statusCode() != 200 || !"success".equals(body.path("status").asString())) {
                throw new IllegalStateException("prometheus " + pathAndQuery + ": HTTP " + r.statusCode() + " "
                        + r.body());
            }
            return body.path("data");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** One series of a query result: its labels and (last) value. */
    record Series(Map<String, String> labels, double value, int points) {
    }

    /** An instant query (/api/v1/query) now; vector results only (scalars come back as one unlabelled series). */
    List<Series> query(String expr) {
        return series(api("/api/v1/query?query=" + enc(expr)));
    }

    /** A range query (/api/v1/query_range) over the last {@code span}, one point per {@code step}. */
    List<Series> queryRange(String expr, Duration span, Duration step) {
        Instant end = Instant.now();
        Instant start = end.minus(span);
        return series(api("/api/v1/query_range?query=" + enc(expr) + "&start=" + start.getEpochSecond() + "&end="
                + end.getEpochSecond() + "&step=" + step.toSeconds()));
    }

    private static List<Series> series(JsonNode data) {
        List<Series> out = new ArrayList<>();
        String type = data.path("resultType").asString();
        if ("scalar".equals(type)) {
            out.add(new Series(Map.of(), Double.parseDouble(data.path("result").get(1).asString()), 1));
            return out;
        }
        for (JsonNode s : data.path("result")) {
            Map<String, String> labels = new LinkedHashMap<>();
            s.path("metric").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asString()));
            if (s.has("values")) {
                JsonNode values = s.path("values");
                out.add(new Series(labels, Double.parseDouble(values.get(values.size() - 1).get(1).asString()),
                        values.size()));
            } else {
                out.add(new Series(labels, Double.parseDouble(s.path("value").get(1).asString()), 1));
            }
        }
        return out;
    }

    /** An alert as /api/v1/alerts lists it (pending or firing; resolved alerts are not listed). */
    record Alert(String name, String state, Map<String, String> labels, Map<String, String> annotations,
                 double value, Instant activeAt) {

        boolean has(Map<String, String> expected) {
            return expected.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
        }

        @Override
        public String toString() {
            return name + "[" + state + ", value " + value + ", since " + activeAt + "] " + labels;
        }
    }

    List<Alert> alerts() {
        List<Alert> out = new ArrayList<>();
        for (JsonNode a : api("/api/v1/alerts").path("alerts")) {
            Map<String, String> labels = strings(a.path("labels"));
            out.add(new Alert(labels.get("alertname"), a.path("state").asString(), labels,
                    strings(a.path("annotations")), Double.parseDouble(a.path("value").asString()),
                    Instant.parse(a.path("activeAt").asString())));
        }
        return out;
    }

    /** Every rule of every loaded group (/api/v1/rules): name, type, health, state, lastError. */
    List<JsonNode> rules() { // alerting rules only: recording rules (the synthetic DCGM series) are not alerts
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode g : api("/api/v1/rules?type=alert").path("groups")) {
            g.path("rules").forEach(out::add);
        }
        return out;
    }

    /** Active scrape targets (/api/v1/targets). */
    List<JsonNode> targets() {
        List<JsonNode> out = new ArrayList<>();
        api("/api/v1/targets?state=active").path("activeTargets").forEach(out::add);
        return out;
    }

    /** /api/v1/label/NAME/values?match[]=SELECTOR: what Grafana's label_values(SELECTOR, NAME) lists. */
    List<String> labelValues(String label, String selector) {
        List<String> out = new ArrayList<>();
        api("/api/v1/label/" + label + "/values?match[]=" + enc(selector)).forEach(v -> out.add(v.asString()));
        return out;
    }

    private static Map<String, String> strings(JsonNode object) {
        Map<String, String> m = new LinkedHashMap<>();
        object.properties().forEach(e -> m.put(e.getKey(), e.getValue().asString()));
        return m;
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    /** Below the ephemeral range, where no outgoing connection takes it before Prometheus binds it. */
    static int freePort() {
        return dev.imexprobe.bench.AgentJvm.freePort();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
