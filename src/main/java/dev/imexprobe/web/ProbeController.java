package dev.imexprobe.web;

import dev.imexprobe.agent.AgentProperties;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.ExportLimits;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeReport;
import dev.imexprobe.probe.StageResult;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.util.EnumSet;
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
                                   @RequestHeader(name = ProbeBudget.SCRAPE_TIMEOUT, required = false)
                                   String scrapeTimeout) {
        long deadline = System.nanoTime() + budget.of(timeout, scrapeTimeout).toNanos();
        Prober.Request request = new Prober.Request(target(target), directions(direction), blankToNull(gpu),
                blankToNull(peerGpu), size(sizeBytes), bool("writeback", writeback), bool("debug", debug));
        boolean prometheus = switch (format.toLowerCase(Locale.ROOT)) {
            case "json" -> false;
            case "prometheus" -> true;
            default -> throw ApiException.invalid("format must be json or prometheus, got '" + RequestFields.truncate(format) + "'");
        };
        checkLocalSide(request.gpu(), request.sizeBytes());
        if (!slots.tryAcquire()) {
            throw new ApiException(HttpStatus.TOO_MANY_REQUESTS, "busy", "this agent is already running "
                    + "its maximum of concurrent probes (imexprobe.probe.concurrency); retry after " + retryAfter + " s",
                    retryAfter);
        }
        ProbeReport report;
        try {
            report = PeerClient.withDeadline(deadline, () -> prober.probe(request));
            report.results().forEach(recorder::record);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        } catch (ExportRegistry.CapExceededException e) {
            throw e.full() ? ApiException.full(e.getMessage() + "; this /probe can be retried", retryAfter)
                    : ApiException.overCap(e.getMessage());
        } finally {
            slots.release();
        }
        if (prometheus) {
            return ResponseEntity.ok().contentType(new MediaType("text", "plain", java.nio.charset.StandardCharsets.UTF_8))
                    .body(BlackboxFormat.render(report));
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(report);
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
                    + RequestFields.truncate(t) + "'");
        }
        return t;
    }

    static Set<Direction> directions(String d) {
        return switch (d.toLowerCase(Locale.ROOT)) {
            case "push" -> EnumSet.of(Direction.PUSH);
            case "pull" -> EnumSet.of(Direction.PULL);
            case "both" -> EnumSet.of(Direction.PUSH, Direction.PULL);
            default -> throw ApiException.invalid("direction must be push, pull or both, got '" + RequestFields.truncate(d) + "'");
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
            throw ApiException.invalid("sizeBytes must be a positive whole number, got '" + RequestFields.truncate(s) + "'");
        }
    }

    static boolean bool(String name, String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no" -> false;
            default -> throw ApiException.invalid(name + " must be true or false, got '" + RequestFields.truncate(v) + "'");
        };
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    /** blackbox_exporter's names for one probe (the text exposition format, version 0.0.4). */
    static final class BlackboxFormat {

        private BlackboxFormat() {
        }

        static String render(ProbeReport r) {
            StringBuilder b = new StringBuilder();
            b.append("# HELP probe_success Whether every probed pair and direction passed\n");
            b.append("# TYPE probe_success gauge\n");
            b.append("probe_success ").append(r.verdict() == dev.imexprobe.probe.Verdict.PASS ? 1 : 0).append('\n');
            b.append("# HELP probe_duration_seconds How long the whole probe took\n");
            b.append("# TYPE probe_duration_seconds gauge\n");
            b.append("probe_duration_seconds ").append(r.durationSeconds()).append('\n');
            b.append("# HELP probe_stage_duration_seconds Duration of each stage of each pair and direction\n");
            b.append("# TYPE probe_stage_duration_seconds gauge\n");
            for (PairResult p : r.results()) {
                for (StageResult s : p.stages()) {
                    b.append("probe_stage_duration_seconds").append(labels(p, s)).append(' ').append(s.durationSeconds())
                            .append('\n');
                }
            }
            b.append("# HELP probe_stage_cu_result CUresult code of each stage that called the driver\n");
            b.append("# TYPE probe_stage_cu_result gauge\n");
            for (PairResult p : r.results()) {
                for (StageResult s : p.stages()) {
                    if (s.cuResult() != null) {
                        b.append("probe_stage_cu_result").append(labels(p, s)).append(' ').append(s.cuResult()).append('\n');
                    }
                }
            }
            return b.toString();
        }

        private static String labels(PairResult p, StageResult s) {
            return "{stage=\"" + s.name().label() + "\",direction=\"" + p.direction().label() + "\",source_gpu=\""
                    + escape(p.sourceGpu()) + "\",target_gpu=\"" + escape(p.targetGpu()) + "\"}";
        }

        private static String escape(String v) {
            return v == null ? "" : v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
        }
    }
}
