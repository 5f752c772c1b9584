package dev.imexprobe.agent;

import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeService;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.function.Supplier;

/**
 * Ready means this agent can take part in probes: the driver loaded, it sees a GPU, it holds a usable IMEX
 * channel (each requirement can be switched off with imexprobe.readiness.*). Failed probes never make it
 * unready: an agent that reports a broken fabric is doing its job.
 */
public class ReadinessHealth extends AbstractHealthIndicator {

    private final Supplier<NodeReport> node;
    private final AgentProperties.Readiness require;

    public ReadinessHealth(NodeService node, AgentProperties.Readiness require) {
        this(node::report, require);
    }

    /** For tests: any source of node reports. */
    ReadinessHealth(Supplier<NodeReport> node, AgentProperties.Readiness require) {
        super("imexprobe readiness check failed");
        this.node = node;
        this.require = require;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        NodeReport r = node.get();
        boolean driver = r.driver().loaded();
        boolean gpu = !r.gpus().isEmpty();
        boolean channel = r.usableChannels() > 0;
        builder.withDetail("driver", driver).withDetail("gpus", r.gpus().size())
                .withDetail("usableChannels", r.usableChannels()).withDetail("fake", r.fake());
        StringBuilder why = new StringBuilder();
        if (require.driver() && !driver) {
            why.append("no usable NVIDIA driver library; ");
        }
        if (require.gpu() && !gpu) {
            why.append("no GPU visible; ");
        }
        if (require.channel() && !channel) {
            why.append("no usable IMEX channel; ");
        }
        if (why.isEmpty()) {
            builder.up();
        } else {
            builder.down().withDetail("reason", why.substring(0, why.length() - 2)
                    + " (see GET /v1/node; imexprobe.readiness.* relaxes these)");
        }
    }
}
