package dev.imexprobe.mesh;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.ProbeResults;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class MeshStateTest {

    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
    private static final PairKey AB = new PairKey("node-a", "GPU-a0", "node-b", "GPU-b0");
    private static final PairKey AC = new PairKey("node-a", "GPU-a0", "node-c", "GPU-c0");

    private final MutableClock clock = new MutableClock(T0);
    private final MeshState state = new MeshState(clock);

    @Test
    void aPairCountsTheFailuresAmongItsLast64Results() {
        java.util.Random rnd = new java.util.Random();
        long seed = rnd.nextLong();
        rnd.setSeed(seed);
        int n = 1 + rnd.nextInt(200);
        double share = rnd.nextDouble();
        List<Boolean> failed = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            boolean fails = rnd.nextDouble() < share;
            failed.add(fails);
            state.record(fails ? ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0",
                    "node-b", "GPU-b0") : ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));
        }
        List<Boolean> last = failed.subList(Math.max(0, n - PairState.RECENT), n);

        PairState p = only(state.snapshot());
        assertThat(p.recentProbes()).as("seed %d, %d results", seed, n).isEqualTo(last.size());
        assertThat(p.recentFailures()).as("seed %d, %d results", seed, n)
                .isEqualTo((int) last.stream().filter(f -> f).count());

        state.notProbed(AB, null);
        assertThat(only(state.snapshot()).recentProbes()).as("a pair no longer probed has no recent history").isNull();
    }

    @Test
    void anExpectedPairIsUnknownWithNothingMeasured() {
        state.expect(AB);

        PairState p = only(state.snapshot());
        assertThat(p.key()).isEqualTo(AB);
        assertThat(p.state()).isEqualTo(PairState.State.UNKNOWN);
        assertThat(p.lastProbe()).isNull();
        assertThat(p.lastSuccess()).isNull();
        assertThat(p.ageSeconds()).isNull();
        assertThat(p.stage()).isNull();
        assertThat(p.cuResult()).isNull();
        assertThat(p.finding()).isNull();
    }

    @Test
    void unknownBecomesOkOnAPass() {
        state.expect(AB);
        clock.advance(Duration.ofSeconds(3));
        state.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));
        clock.advance(Duration.ofMillis(2500));

        PairState p = only(state.snapshot());
        assertThat(p.state()).isEqualTo(PairState.State.OK);
        assertThat(p.lastSuccess()).isEqualTo(T0.plusSeconds(3));
        assertThat(p.lastProbe()).isEqualTo(T0.plusSeconds(3));
        assertThat(p.ageSeconds()).isEqualTo(2.5);
        assertThat(p.consecutiveFailures()).isZero();
        assertThat(p.stage()).isNull();
        assertThat(p.cuResult()).isNull();
        assertThat(p.cuResultName()).isNull();
        assertThat(p.finding()).isNull();
    }

    @Test
    void unknownBecomesFailedWithTheFirstFailingStageAndItsFinding() {
        state.expect(AB);
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-b", "GPU-b0"));

        PairState p = only(state.snapshot());
        assertThat(p.state()).isEqualTo(PairState.State.FAILED);
        assertThat(p.stage()).isEqualTo("import");
        assertThat(p.cuResult()).isEqualTo(800);
        assertThat(p.cuResultName()).isEqualTo("CUDA_ERROR_NOT_PERMITTED");
        assertThat(p.finding().code()).isEqualTo("IMPORT_NOT_PERMITTED");
        assertThat(p.lastSuccess()).isNull();
        assertThat(p.consecutiveFailures()).isEqualTo(1);
    }

    @Test
    void lastSuccessIsKeptAcrossFailuresAndFailuresCount() {
        state.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));
        clock.advance(Duration.ofSeconds(30));
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-b", "GPU-b0"));
        clock.advance(Duration.ofSeconds(30));
        state.record(ProbeResults.failAt(Stage.MAP, CuResult.of(2), "node-a", "GPU-a0", "node-b", "GPU-b0"));

        PairState p = only(state.snapshot());
        assertThat(p.state()).isEqualTo(PairState.State.FAILED);
        assertThat(p.lastSuccess()).isEqualTo(T0);
        assertThat(p.lastProbe()).isEqualTo(T0.plusSeconds(60));
        assertThat(p.consecutiveFailures()).isEqualTo(2);
        assertThat(p.stage()).isEqualTo("map");
        assertThat(p.cuResult()).isEqualTo(2);
    }

    @Test
    void aPassAfterFailuresClearsTheFailure() {
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-b", "GPU-b0"));
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-b", "GPU-b0"));
        clock.advance(Duration.ofSeconds(30));
        state.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));

        PairState p = only(state.snapshot());
        assertThat(p.state()).isEqualTo(PairState.State.OK);
        assertThat(p.consecutiveFailures()).isZero();
        assertThat(p.lastSuccess()).isEqualTo(T0.plusSeconds(30));
        assertThat(p.stage()).isNull();
        assertThat(p.cuResult()).isNull();
        assertThat(p.finding()).isNull();
    }

    @Test
    void aTransferFailureHasAStageButNoCuResult() {
        state.record(ProbeResults.unreachable("node-a", "GPU-a0", "10.0.0.2:8080", "node-b", "GPU-b0"));

        PairState p = only(state.snapshot());
        assertThat(p.state()).isEqualTo(PairState.State.FAILED);
        assertThat(p.stage()).isEqualTo("transfer");
        assertThat(p.cuResult()).isNull();
        assertThat(p.cuResultName()).isNull();
        assertThat(p.finding().code()).isEqualTo("PEER_UNREACHABLE");
    }

    @Test
    void aPeerNeverIdentifiedIsKeptUnderItsAddressAndAnUnknownGpu() {
        state.record(ProbeResults.unreachable("node-a", "GPU-a0", "10.0.0.2:8080", "10.0.0.2:8080", null));

        assertThat(only(state.snapshot()).key())
                .isEqualTo(new PairKey("node-a", "GPU-a0", "10.0.0.2:8080", PairKey.UNKNOWN_GPU));
    }

    @Test
    void expectingAMeasuredPairKeepsItsResult() {
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-b", "GPU-b0"));
        state.expect(AB);

        assertThat(only(state.snapshot()).state()).isEqualTo(PairState.State.FAILED);
    }

    @Test
    void forgetsPairsNeitherExpectedNorProbedForTheGivenAge() {
        state.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));
        state.expect(AC);
        clock.advance(Duration.ofSeconds(100));
        state.expect(AC); // node-c is still there; node-b left the domain
        clock.advance(Duration.ofSeconds(60));

        assertThat(state.forgetOlderThan(Duration.ofSeconds(120))).containsExactly(AB);
        assertThat(state.snapshot()).extracting(PairState::key).containsExactly(AC);
        assertThat(state.forgetOlderThan(Duration.ofSeconds(120))).isEmpty();
    }

    @Test
    void aForgottenPairThatComesBackStartsAfresh() {
        state.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));
        clock.advance(Duration.ofSeconds(600));
        state.forgetOlderThan(Duration.ofSeconds(60));
        state.expect(AB);

        PairState p = only(state.snapshot());
        assertThat(p.state()).isEqualTo(PairState.State.UNKNOWN);
        assertThat(p.lastSuccess()).isNull();
    }

    @Test
    void snapshotsAreSortedAndDoNotChangeAfterwards() {
        state.expect(AC);
        state.expect(AB);
        List<PairState> before = state.snapshot();
        state.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-b0"));

        assertThat(before).extracting(PairState::key).containsExactly(AB, AC);
        assertThat(before.getFirst().state()).isEqualTo(PairState.State.UNKNOWN);
    }

    @Test
    void theLastCycleIsWhenTheLastRoundFinished() {
        assertThat(state.lastCycle()).isNull();
        clock.advance(Duration.ofSeconds(7));
        state.cycleFinished();

        assertThat(state.lastCycle()).isEqualTo(T0.plusSeconds(7));
    }

    private static PairState only(List<PairState> pairs) {
        assertThat(pairs).hasSize(1);
        return pairs.getFirst();
    }
}
