package dev.imexprobe.condition;

import dev.imexprobe.json.Json;
import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.kubernetes.KubernetesApiException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One {@code events.k8s.io/v1} Event on the Node per transition of the condition, with the new reason as the
 * Event's reason ({@code Warning} for {@code False}, else {@code Normal}).
 *
 * <p>Rate-limited by a token bucket ({@code burst} Events at once, one more per {@code refill}): a flapping fabric
 * must not flood etcd; a transition past the limit is logged and dropped, the condition itself still moves. An
 * Event that could not be created stays queued (ten at most, the oldest dropped first) and is sent again with the
 * next one; its name is fixed when queued, so a retry of an Event the server did create answers 409 and counts
 * as sent.
 */
public final class NodeEvents {

    private static final Logger log = LoggerFactory.getLogger(NodeEvents.class);
    static final String CONTROLLER = "imexprobe.dev/agent";
    static final String ACTION = "ConditionChanged";
    private static final int MAX_PENDING = 10;
    /** The API's MicroTime: RFC 3339 with microseconds, in UTC. */
    static final DateTimeFormatter MICRO_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private final KubernetesApi api;
    private final String node;
    private final String namespace;
    private final String instance;
    private final int burst;
    private final Duration refill;
    private final Clock clock;
    private final Deque<Map<String, Object>> pending = new ArrayDeque<>();
    private double tokens;
    private Instant lastRefill;
    private int dropped;

    /**
     * @param namespace where the Events are created (Node Events live in {@code default}, as the kubelet's do)
     * @param instance  reportingInstance: this agent's pod name, else the node name
     */
    public NodeEvents(KubernetesApi api, String node, String namespace, String instance, int burst, Duration refill,
                      Clock clock) {
        if (burst < 1 || refill == null || refill.isNegative() || refill.isZero()) {
            throw new IllegalArgumentException("imexprobe.node-condition.event-burst must be at least 1 and "
                    + "event-refill positive (burst=" + burst + ", refill=" + refill + ")");
        }
        this.api = api;
        this.node = node;
        this.namespace = namespace;
        this.instance = instance;
        this.burst = burst;
        this.refill = refill;
        this.clock = clock;
        this.tokens = burst;
        this.lastRefill = clock.instant();
    }

    /** Queues the Event of one transition, when the rate allows. */
    public synchronized void transition(NodeJudge.Verdict to, Instant at) {
        Instant now = clock.instant();
        tokens = Math.min(burst, tokens + Duration.between(lastRefill, now).toMillis() / (double) refill.toMillis());
        lastRefill = now;
        if (tokens < 1) {
            dropped++;
            log.warn("node {}: condition {} is now {} ({}); no Event for it: more than {} transitions within {} "
                    + "({} dropped so far)", node, NodeJudge.TYPE, to.status().label(), to.reason(), burst,
                    refill.multipliedBy(burst), dropped);
            return;
        }
        tokens -= 1;
        if (pending.size() == MAX_PENDING) {
            pending.removeFirst();
        }
        pending.addLast(event(to, at));
    }

    /** Sends what is queued; what fails stays for the next call. */
    public synchronized void flush() {
        while (!pending.isEmpty()) {
            Map<String, Object> event = pending.peekFirst();
            String what = "creating Event " + eventName(event) + " for node " + node;
            try {
                KubernetesApi.Response r = api.send("POST", "/apis/events.k8s.io/v1/namespaces/"
                                + KubernetesApi.encode(namespace) + "/events", "application/json",
                        Json.MAPPER.writeValueAsBytes(event), what);
                if (!r.ok() && r.status() != 409) {
                    log.warn("Kubernetes API answered HTTP {} while {}{}{}; kept for the next round", r.status(), what,
                            r.apiMessage(), r.status() == 403 ? ": grant create on events.events.k8s.io in namespace "
                                    + namespace + " (the chart's node-condition RBAC)" : "");
                    return;
                }
            } catch (KubernetesApiException e) {
                log.warn("{}; Event kept for the next round", e.getMessage());
                return;
            }
            pending.removeFirst();
        }
    }

    synchronized int pending() {
        return pending.size();
    }

    private Map<String, Object> event(NodeJudge.Verdict to, Instant at) {
        Instant now = clock.instant();
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("name", node + ".imexfabricimport." + Long.toHexString(now.toEpochMilli())
                + Long.toHexString(System.nanoTime() & 0xfff));
        metadata.put("namespace", namespace);
        Map<String, Object> regarding = new LinkedHashMap<>();
        regarding.put("apiVersion", "v1");
        regarding.put("kind", "Node");
        regarding.put("name", node);
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("apiVersion", "events.k8s.io/v1");
        e.put("kind", "Event");
        e.put("metadata", metadata);
        // MicroTime: RFC 3339 with microseconds.
        e.put("eventTime", MICRO_TIME.format(now));
        e.put("reportingController", CONTROLLER);
        e.put("reportingInstance", instance);
        e.put("action", ACTION);
        e.put("reason", to.reason());
        e.put("type", to.status() == NodeJudge.Status.FALSE ? "Warning" : "Normal");
        e.put("regarding", regarding);
        String note = NodeJudge.TYPE + " is " + to.status().label() + " since " + at + ": " + to.message();
        e.put("note", note.length() <= 1024 ? note : note.substring(0, 1023) + "…");
        return e;
    }

    private static String eventName(Map<String, Object> event) {
        return String.valueOf(((Map<?, ?>) event.get("metadata")).get("name"));
    }
}
