package dev.imexprobe.condition;

import dev.imexprobe.json.Json;
import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.kubernetes.KubernetesApiException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Keeps the {@code ImexFabricImport} condition on this agent's Node: a strategic merge patch of
 * {@code /api/v1/nodes/{node}/status} (conditions merge by {@code type}, so the kubelet's own conditions are left
 * alone).
 *
 * <ul>
 *   <li>A patch is sent when the verdict changed (status, reason or message), when the last one failed (retried
 *       every round until it lands), and otherwise once per {@code heartbeat}: no patch per round while nothing
 *       changes.</li>
 *   <li>{@code lastTransitionTime} moves only when the status changes; {@code lastHeartbeatTime} on every patch.
 *       On its first patch the writer reads the Node, and a condition already there with the same status keeps
 *       its transition time (an agent restart is not a transition).</li>
 *   <li>Each change of status or reason is one Event ({@link NodeEvents}).</li>
 *   <li>"Not yet judged" (pairs failed fewer rounds than the debounce, none passed) is never written: an agent
 *       restarting on a broken node does not flap its condition through Unknown, and a starting agent whose peers
 *       are not up yet writes nothing until it knows.</li>
 * </ul>
 * Every outcome is reported to {@code onWrite} with one of {@link #RESULTS} (the metric
 * {@code imexprobe_node_condition_writes_total{result}}).
 */
public final class NodeConditionWriter {

    private static final Logger log = LoggerFactory.getLogger(NodeConditionWriter.class);
    public static final String PATCH_TYPE = "application/strategic-merge-patch+json";
    public static final List<String> RESULTS = List.of("ok", "forbidden", "conflict", "error", "unreachable");

    private final KubernetesApi api;
    private final String node;
    private final Duration heartbeat;
    private final NodeEvents events;
    private final Consumer<String> onWrite;
    private final Clock clock;

    private NodeJudge.Verdict wanted;
    private Instant transition;
    private Instant lastWritten;
    private boolean dirty;
    private boolean adopted;
    private String lastFailure;

    public NodeConditionWriter(KubernetesApi api, String node, Duration heartbeat, NodeEvents events,
                               Consumer<String> onWrite, Clock clock) {
        if (heartbeat == null || heartbeat.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("imexprobe.node-condition.heartbeat must be at least 1s, got "
                    + heartbeat);
        }
        this.api = api;
        this.node = node;
        this.heartbeat = heartbeat;
        this.events = events;
        this.onWrite = onWrite;
        this.clock = clock;
    }

    /** Takes this round's verdict; patches and sends Events as the class says. Never throws for the API. */
    public synchronized void offer(NodeJudge.Verdict verdict) {
        if (!adopted) {
            adopted = adoptExisting();
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        boolean settling = NodeJudge.REASON_SETTLING.equals(verdict.reason());
        if (!settling) {
            if (wanted == null || verdict.status() != wanted.status()) {
                transition = now;
            }
            if (verdict.differsFrom(wanted)) {
                log.info("node {}: condition {} → {} ({}): {}", node, NodeJudge.TYPE, verdict.status().label(),
                        verdict.reason(), verdict.message());
                events.transition(verdict, transition);
            }
            if (!verdict.equals(wanted)) {
                wanted = verdict;
                dirty = true;
            }
        }
        if (wanted != null && !dirty && (lastWritten == null || !now.isBefore(lastWritten.plus(heartbeat)))) {
            dirty = true;
        }
        if (dirty) {
            patch(now);
        }
        events.flush();
    }

    synchronized NodeJudge.Verdict wanted() {
        return wanted;
    }

    private void patch(Instant now) {
        Map<String, Object> condition = new LinkedHashMap<>();
        condition.put("type", NodeJudge.TYPE);
        condition.put("status", wanted.status().label());
        condition.put("reason", wanted.reason());
        condition.put("message", wanted.message());
        condition.put("lastHeartbeatTime", now.toString());
        condition.put("lastTransitionTime", transition.toString());
        Map<String, Object> body = Map.of("status", Map.of("conditions", List.of(condition)));
        String what = "patching condition " + NodeJudge.TYPE + " of node " + node;
        String result;
        String failure;
        try {
            KubernetesApi.Response r = api.send("PATCH", nodePath() + "/status", PATCH_TYPE,
                    Json.MAPPER.writeValueAsBytes(body), what);
            result = switch (r.status()) {
                case 200, 201 -> "ok";
                case 401, 403 -> "forbidden";
                case 409 -> "conflict";
                default -> "error";
            };
            failure = result.equals("ok") ? null : "Kubernetes API answered HTTP " + r.status() + " while " + what
                    + r.apiMessage() + (result.equals("forbidden") ? ": grant patch on nodes/status to the agent's "
                    + "service account (the chart's ClusterRole when nodeCondition.enabled)" : "");
        } catch (KubernetesApiException e) {
            result = "unreachable";
            failure = e.getMessage();
        }
        onWrite.accept(result);
        if (failure == null) {
            dirty = false;
            lastWritten = now;
            if (lastFailure != null) {
                log.info("node {}: condition {} written again after: {}", node, NodeJudge.TYPE, lastFailure);
                lastFailure = null;
            }
            return;
        }
        if (!failure.equals(lastFailure)) {
            log.warn("{}; probing goes on and the patch is sent again next round", failure);
        }
        lastFailure = failure;
    }

    /** Reads the condition already on the Node, so that a restart keeps its transition time. */
    private boolean adoptExisting() {
        try {
            KubernetesApi.Response r = api.get(nodePath(), "reading node " + node);
            if (r.status() == 404 || r.status() == 403 || r.status() == 401) {
                if (r.status() == 404) {
                    log.warn("node {} not found by the Kubernetes API: check IMEXPROBE_NODE_NAME (spec.nodeName "
                            + "through the downward API)", node);
                }
                return true; // nothing to adopt, or not allowed to look: start from now
            }
            if (!r.ok()) {
                return false;
            }
            for (JsonNode c : Json.MAPPER.readTree(r.body()).path("status").path("conditions")) {
                if (NodeJudge.TYPE.equals(c.path("type").asString(""))) {
                    NodeJudge.Status status = switch (c.path("status").asString("")) {
                        case "True" -> NodeJudge.Status.TRUE;
                        case "False" -> NodeJudge.Status.FALSE;
                        default -> NodeJudge.Status.UNKNOWN;
                    };
                    wanted = new NodeJudge.Verdict(status, c.path("reason").asString(""),
                            c.path("message").asString(""));
                    transition = Instant.parse(c.path("lastTransitionTime").asString());
                    String beat = c.path("lastHeartbeatTime").asString(null);
                    lastWritten = beat != null ? Instant.parse(beat) : null;
                }
            }
            return true;
        } catch (KubernetesApiException | JacksonException | java.time.format.DateTimeParseException e) {
            return false;
        }
    }

    private String nodePath() {
        return "/api/v1/nodes/" + KubernetesApi.encode(node);
    }
}
