package dev.imexprobe.agent;

import dev.imexprobe.probe.DriverExecutor;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Part of liveness: the agent is live while at least one driver thread can run. A driver call that never
 * returns cannot be interrupted, and on the H200 cuMemMap of an altered FABRIC handle did not return within
 * 45 s of the run that found it (docs/gpu-validation.md): its thread and what it had imported stay held
 * until the process exits. When every driver thread is held like that the agent can do no driver work at all,
 * so liveness goes DOWN and the kubelet's restart is what lets the driver release them.
 */
public class DriverHealth extends AbstractHealthIndicator {

    private final DriverExecutor executor;
    private final Clock clock;

    public DriverHealth(DriverExecutor executor) {
        this(executor, Clock.systemUTC());
    }

    DriverHealth(DriverExecutor executor, Clock clock) {
        super("imexprobe driver check failed");
        this.executor = executor;
        this.clock = clock;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        int stuck = executor.stuck();
        builder.withDetail("threads", executor.threads()).withDetail("callsStuck", stuck);
        executor.oldestStuckSince().ifPresent(since -> builder.withDetail("oldestStuckSeconds",
                Duration.between(since, Instant.now(clock)).toSeconds()));
        if (executor.exhausted()) {
            builder.down().withDetail("reason", "all " + executor.threads() + " driver threads are inside calls that "
                    + "passed the " + executor.timeout().toMillis() + " ms deadline and have not returned: no driver "
                    + "work can run, and only a restart makes the driver release what those calls hold");
        } else {
            builder.up();
        }
    }
}
