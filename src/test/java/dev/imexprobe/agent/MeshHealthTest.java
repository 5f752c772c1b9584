package dev.imexprobe.agent;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.PairKey;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.ProbeResults;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class MeshHealthTest {

    private final MeshState mesh = new MeshState(new MutableClock(Instant.parse("2026-12-01T10:00:00Z")));

    @Test
    void unknownBeforeTheFirstRound() {
        mesh.expect(new PairKey("a", "GPU-a", "b", "GPU-b"));

        Health h = new MeshHealth(mesh).health();

        assertThat(h.getStatus()).isEqualTo(Status.UNKNOWN);
        assertThat(h.getDetails()).containsEntry("pairs", 1).containsEntry("unknown", 1L).doesNotContainKey("lastCycle");
    }

    @Test
    void upWithTheCountsEvenWhenEveryPairFails() {
        mesh.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "a", "GPU-a", "b", "GPU-b"));
        mesh.record(ProbeResults.failAt(Stage.CREATE, CuResult.NOT_PERMITTED, "a", "GPU-a", "c", "GPU-c"));
        mesh.record(ProbeResults.failAt(Stage.MAP, CuResult.NOT_PERMITTED, "a", "GPU-a", "d", "GPU-d"));
        mesh.cycleFinished();

        Health h = new MeshHealth(mesh).health();

        assertThat(h.getStatus()).as("failing pairs are a report, not a reason to restart").isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("pairs", 3).containsEntry("ok", 0L).containsEntry("failed", 3L)
                .containsEntry("unknown", 0L).containsEntry("lastCycle", "2026-12-01T10:00:00Z");
    }
}
