package dev.imexprobe.agent;

import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeService;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.function.Supplier;

/**
 * Ready means this agent can serve: its configuration bound (a bad value stops it at start) and its server
 * answers. What it watches never makes it unready: no driver, no GPU, no IMEX channel, a daemon down are
 * findings, metrics and alerts. An unready monitor would leave the headless Service, its peers would stop probing
 * it and Prometheus would stop scraping it, so the very node that is broken would vanish. This component is UP
 * and shows, as details, what the node report says (GET /v1/node has the findings).
 */
public class ReadinessHealth extends AbstractHealthIndicator {

    private final Supplier<NodeReport> node;

    public ReadinessHealth(NodeService node) {
        this(node::report);
    }

    /** For tests: any source of node reports. */
    ReadinessHealth(Supplier<NodeReport> node) {
        super("imexprobe readiness check failed");
        this.node = node;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.up();
        NodeReport r;
        try {
            r = node.get();
        } catch (RuntimeException e) {
            // Still serving: peers and Prometheus must keep reaching an agent whose node cannot be inspected.
            builder.withDetail("nodeReport", "not available: " + e.getMessage() + " (see GET /v1/node)");
            return;
        }
        builder.withDetail("driver", r.driver().loaded()).withDetail("gpus", r.gpus().size())
                .withDetail("usableChannels", r.usableChannels()).withDetail("fake", r.fake())
                .withDetail("findings", r.findings().stream().map(f -> f.code()).toList());
    }
}
