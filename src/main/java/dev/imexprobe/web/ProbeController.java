package dev.imexprobe.web;

import dev.imexprobe.agent.AgentProperties;
import dev.imexprobe.api.Wire;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.ExportLimits;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDeadline;
import dev.imexprobe.probe.ProbeReport;
import dev.imexprobe.probe.StageResult;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.regex.Pattern;

/**
 * GET /probe?target=host:port: a full probe on demand, like blackbox_exporter's /probe. JSON by default;
 * {@code format=prometheus} answers in the text exposition format with blackbox's names. At most
 * imexprobe.probe.concurrency probes run at once; beyond that, 429 with Retry-After. The whole probe ends by its
 * deadline ({@link ProbeBudget}): pairs it left no time for are reported as timeouts, and the answer is still 200.
 */
@RestController
public class ProbeController {

    /** host:port, [v6]:port; the host part letters, digits, dots, dashes, underscores, colons in brackets. */
    private static final Pattern TARGET = Pattern.compile("(\\[[0-9A-Fa-f:.]+(%[A-Za-z0-9]+)?]|[A-Za-z0-9._-]+):([0-9]{1,5})");

    /** The query parameters /probe takes, in {@link #probe}'s order (DirectRoutes reads them by this list). */
    static final List<String> PARAMETERS = List.of("target", "direction", "gpu", "peerGpu", "sizeBytes", "writeback",
            "debug", "format", "timeout", "module");

    private final Prober prober;
    private final ProbeRecorder recorder;
    private final NodeService node;
    private final ExportLimits limits;
    private final Semaphore slots;
    private final long retryAfter;
    private final ProbeBudget budget;

    public ProbeController(Prober prober, ProbeRecorder recorder, AgentProperties properties, NodeService node,
                           ExportLimits limits) {
        this.prober = prober;
        this.recorder = recorder;
        this.node = node;
        this.limits = limits;
        this.slots = new Semaphore(properties.probe().concurrency());
        this.budget = new ProbeBudget(properties.probe().maxtimeout());
        this.retryAfter = properties.probe().retryafter() > 0 ? properties.probe().retryafter()
                : Math.max(1, properties.mesh().interval().toSeconds());
    }

    @GetMapping(path = "/probe", produces = {MediaType.APPLICATION_JSON_VALUE, MediaType.TEXT_PLAIN_VALUE})
    public ResponseEntity<?> probe(@RequestParam(required = false) String target,
                                   @RequestParam(defaultValue = "both") String direction,
                                   @RequestParam(required = false) String gpu,
                                   @RequestParam(required = false) String peerGpu,
                                   @RequestParam(required = false) String sizeBytes,
                                   @RequestParam(defaultValue = "true") String writeback,
                                   @RequestParam(defaultValue = "false") String debug,
                                   @RequestParam(defaultValue = "json") String format,
                                   @RequestParam(required = false) String timeout,
                                   // blackbox_exporter's: a job copied from its config sends it; nothing to choose here
                                   @RequestParam(required = false) String module,
                                   @RequestHeader(name = ProbeBudget.SCRAPE_TIMEOUT, required = false)
                                   String scrapeTimeout) {
        ProbeReport report = report(target, direction, gpu, peerGpu, sizeBytes, writeback, debug, format, timeout,
                scrapeTimeout);
        recorder.recordAfter(report.results()); // on the recorder thread; readers wait for it (RecordedFirst)
        if (prometheus(format)) {
            return ResponseEntity.ok().contentType(new MediaType("text", "plain", StandardCharsets.UTF_8))
                    .body(BlackboxFormat.render(report));
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(report);
    }

    /**
     * The probe, its parameters checked as {@link #probe} checks them, without recording it: DirectRoutes records
     * after its answer is out ({@link ProbeRecorder#promise}).
     */
    ProbeReport report(String target, String direction, String gpu, String peerGpu, String sizeBytes,
                       String writeback, String debug, String format, String timeout, String scrapeTimeout) {
        long deadline = System.nanoTime() + budget.of(timeout, scrapeTimeout).toNanos();
        Prober.Request request = new Prober.Request(target(target), directions(direction), blankToNull(gpu),
                blankToNull(peerGpu), size(sizeBytes), bool("writeback", writeback), bool("debug", debug));
        prometheus(format); // checked with the others, before any GPU or peer is asked
        checkLocalSide(request.gpu(), request.sizeBytes());
        if (!slots.tryAcquire()) {
            throw new ApiException(HttpStatus.TOO_MANY_REQUESTS, "busy", "this agent is already running "
                    + "its maximum of concurrent probes (imexprobe.probe.concurrency); retry after " + retryAfter + " s",
                    retryAfter);
        }
        try {
            return ProbeDeadline.within(deadline, () -> prober.probe(request));
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        } catch (ExportRegistry.CapExceededException e) {
            throw e.full() ? ApiException.full(e.getMessage() + "; this /probe can be retried", retryAfter)
                    : ApiException.overCap(e.getMessage());
        } finally {
            slots.release();
        }
    }

    private static boolean prometheus(String format) {
        return switch (format.toLowerCase(Locale.ROOT)) {
            case "json" -> false;
            case "prometheus" -> true;
            default -> throw ApiException.invalid("format must be json or prometheus, got '" + Wire.truncate(format) + "'");
        };
    }

    /**
     * This agent's GPU selector and the size, checked like an export's before any peer or driver is asked: a
     * caller's mistake is a 400/413 even when the target is down.
     */
    private void checkLocalSide(String gpu, Long sizeBytes) {
        List<GpuDevice> gpus;
        try {
            gpus = gpu == null ? node.gpus() : List.of(node.resolveGpu(gpu));
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        }
        if (sizeBytes != null) {
            gpus.forEach(g -> Requests.size(sizeBytes, g, limits.maxBytes()));
        }
    }

    static String target(String target) {
        if (target == null || target.isBlank()) {
            throw ApiException.invalid("target is required: host:port of another imexprobe agent ([v6]:port for IPv6)");
        }
        String t = target.trim();
        var m = TARGET.matcher(t);
        if (!m.matches() || Integer.parseInt(m.group(3)) < 1 || Integer.parseInt(m.group(3)) > 65535) {
            throw ApiException.invalid("target must be host:port (IPv6 in brackets: [fd00::1]:8080), got '"
                    + Wire.truncate(t) + "'");
        }
        return t;
    }

    static Set<Direction> directions(String d) {
        return switch (d.toLowerCase(Locale.ROOT)) {
            case "push" -> EnumSet.of(Direction.PUSH);
            case "pull" -> EnumSet.of(Direction.PULL);
            case "both" -> EnumSet.of(Direction.PUSH, Direction.PULL);
            default -> throw ApiException.invalid("direction must be push, pull or both, got '" + Wire.truncate(d) + "'");
        };
    }

    static Long size(String s) {
        if (s == null || s.isBlank()) {
            return null;
        }
        try {
            long v = Long.parseLong(s.trim());
            if (v <= 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw ApiException.invalid("sizeBytes must be a positive whole number, got '" + Wire.truncate(s) + "'");
        }
    }

    static boolean bool(String name, String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no" -> false;
            default -> throw ApiException.invalid(name + " must be true or false, got '" + Wire.truncate(v) + "'");
        };
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    /**
     * blackbox_exporter's names for one probe, written by the Prometheus client library's text writer (format
     * 0.0.4: families and label names sorted, values as doubles; a family without samples is left out).
     */
    static final class BlackboxFormat {

        private BlackboxFormat() {
        }

        static String render(ProbeReport r) {
            GaugeSnapshot.Builder stageDurations = GaugeSnapshot.builder().name("probe_stage_duration_seconds")
                    .help("Duration of each stage of each pair and direction");
            GaugeSnapshot.Builder cuResults = GaugeSnapshot.builder().name("probe_stage_cu_result")
                    .help("CUresult code of each stage that called the driver");
            Set<Labels> seen = new HashSet<>();
            for (PairResult p : r.results()) {
                for (StageResult s : p.stages()) {
                    Labels labels = Labels.of("stage", s.name().label(), "direction", p.direction().label(),
                            "source_gpu", orEmpty(p.sourceGpu()), "target_gpu", orEmpty(p.targetGpu()));
                    if (!seen.add(labels)) {
                        continue; // one sample per series: the writer refuses duplicates, and the first one is the answer
                    }
                    stageDurations.dataPoint(GaugeDataPointSnapshot.builder().labels(labels)
                            .value(s.durationSeconds()).build());
                    if (s.cuResult() != null) {
                        cuResults.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(s.cuResult()).build());
                    }
                }
            }
            MetricSnapshots snapshots = new MetricSnapshots(
                    gauge("probe_success", "Whether every probed pair and direction passed",
                            r.verdict() == dev.imexprobe.probe.Verdict.PASS ? 1 : 0),
                    gauge("probe_duration_seconds", "How long the whole probe took", r.durationSeconds()),
                    stageDurations.build(), cuResults.build());
            ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
            try {
                PrometheusTextFormatWriter.create().write(out, snapshots);
            } catch (IOException e) {
                throw new UncheckedIOException(e); // not thrown by a ByteArrayOutputStream
            }
            return out.toString(StandardCharsets.UTF_8);
        }

        private static GaugeSnapshot gauge(String name, String help, double value) {
            return GaugeSnapshot.builder().name(name).help(help)
                    .dataPoint(GaugeDataPointSnapshot.builder().value(value).build()).build();
        }

        private static String orEmpty(String v) {
            return v == null ? "" : v;
        }
    }
}
