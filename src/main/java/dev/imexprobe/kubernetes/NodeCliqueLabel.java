package dev.imexprobe.kubernetes;

import dev.imexprobe.json.Json;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import tools.jackson.databind.JsonNode;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * This agent's own Node's {@code nvidia.com/gpu.clique} label, from {@code GET /api/v1/nodes/<name>} (the chart
 * grants {@code get} on nodes). Asked at most once per {@code interval}; in between the last answer is served. A
 * refusal (401/403) or a Node the API does not know (404) is said once at INFO and never again while it lasts: the
 * label only refines what NVML says, the agent works without it.
 */
public final class NodeCliqueLabel implements Supplier<CliqueLabel> {

    private static final Logger log = LoggerFactory.getLogger(NodeCliqueLabel.class);

    private final KubernetesApi api;
    private final String node;
    private final Duration interval;
    private final Clock clock;
    private CliqueLabel last;
    private String lastSaid;

    public NodeCliqueLabel(KubernetesApi api, String node, Duration interval, Clock clock) {
        this.api = api;
        this.node = node;
        this.interval = interval;
        this.clock = clock;
    }

    @Override
    public synchronized CliqueLabel get() {
        Instant now = clock.instant();
        if (last == null || !now.isBefore(last.readAt().plus(interval))) {
            last = read(now);
            say(last);
        }
        return last;
    }

    private CliqueLabel read(Instant now) {
        KubernetesApi.Response r;
        try {
            r = api.get("/api/v1/nodes/" + KubernetesApi.encode(node), "reading this node's labels");
        } catch (KubernetesApiException e) {
            return new CliqueLabel(CliqueLabel.ERROR, null, e.getMessage(), now);
        }
        if (r.status() == 404) {
            return new CliqueLabel(CliqueLabel.ABSENT, null, "the API has no Node " + node + " (404): "
                    + "IMEXPROBE_NODE_NAME must be the pod's spec.nodeName", now);
        }
        if (r.status() == 401 || r.status() == 403) {
            return new CliqueLabel(CliqueLabel.FORBIDDEN, null, "HTTP " + r.status() + r.apiMessage()
                    + ": grant get on nodes (the chart does with cliqueLabel.enabled=true)", now);
        }
        if (!r.ok()) {
            return new CliqueLabel(CliqueLabel.ERROR, null, "HTTP " + r.status() + r.apiMessage()
                    + " reading Node " + node, now);
        }
        JsonNode labels;
        try {
            labels = Json.MAPPER.readTree(r.body()).path("metadata").path("labels");
        } catch (RuntimeException e) {
            return new CliqueLabel(CliqueLabel.ERROR, null, "the Node is not JSON: "
                    + KubernetesApi.shorten(String.valueOf(e.getMessage())), now);
        }
        String value = labels.path(CliqueLabel.NAME).asString(null);
        if (value == null || value.isBlank()) {
            return new CliqueLabel(CliqueLabel.UNSET, null, "Node " + node + " has no label " + CliqueLabel.NAME
                    + " (GPU feature discovery sets it on nodes whose GPUs joined an NVLink fabric)", now);
        }
        return new CliqueLabel(CliqueLabel.OK, value, null, now);
    }

    /** Once per change of state and value: a cluster without the label or the RBAC is not an error to repeat. */
    private void say(CliqueLabel l) {
        String key = l.state() + ":" + l.value() + ":" + l.detail();
        if (key.equals(lastSaid)) {
            return;
        }
        lastSaid = key;
        switch (l.state()) {
            case CliqueLabel.OK -> log.info("Node {} has {}={}", node, CliqueLabel.NAME, l.value());
            case CliqueLabel.ERROR -> log.warn("cannot read Node {}'s labels: {}", node, l.detail());
            default -> log.info("no {} label for this agent ({}); the IMEX domains come from NVML alone",
                    CliqueLabel.NAME, l.detail());
        }
    }
}
