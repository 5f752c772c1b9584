package dev.imexprobe.agent;

import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.PairState;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.List;

/**
 * The mesh as a health detail: UNKNOWN before the first round, then UP with the counts. Never DOWN: failing
 * pairs are what the agent reports, not a reason to restart or unready it (it is not in the readiness group).
 */
public class MeshHealth extends AbstractHealthIndicator {

    private final MeshState mesh;

    public MeshHealth(MeshState mesh) {
        super("mesh health check failed");
        this.mesh = mesh;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        List<PairState> pairs = mesh.snapshot();
        if (mesh.lastCycle() == null) {
            builder.unknown();
        } else {
            builder.up().withDetail("lastCycle", mesh.lastCycle().toString());
        }
        builder.withDetail("pairs", pairs.size())
                .withDetail("ok", pairs.stream().filter(p -> p.state() == PairState.State.OK).count())
                .withDetail("failed", pairs.stream().filter(p -> p.state() == PairState.State.FAILED).count())
                .withDetail("unknown", pairs.stream().filter(p -> p.state() == PairState.State.UNKNOWN).count());
    }
}
