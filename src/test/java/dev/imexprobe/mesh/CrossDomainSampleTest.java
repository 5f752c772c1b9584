package dev.imexprobe.mesh;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CrossDomainSampleTest {

    static final String C1 = "fabric:6a1c7b2e-0000-4000-8000-0000000000c1/1";
    static final String C2 = "fabric:6a1c7b2e-0000-4000-8000-0000000000c1/2";
    static final String OTHER_CLUSTER_C1 = "fabric:00000000-1111-4000-8000-0000000000c2/1";
    static final PairKey AB = new PairKey("a", "GPU-a", "b", "GPU-b");
    static final PairKey AC = new PairKey("a", "GPU-a", "c", "GPU-c");
    static final PairKey AD = new PairKey("a", "GPU-a", "d", "GPU-d");

    final AtomicLong now = new AtomicLong(1_000_000_000L);

    CrossDomainSample sample(Duration interval) {
        return new CrossDomainSample(interval, Duration.ofSeconds(2), now::get);
    }

    static PairResult passed() {
        return new PairResult(Direction.PUSH, "a", "GPU-a", "b", "GPU-b", Verdict.PASS, 0.1, null, List.of(), null);
    }

    static PairResult failedAtImport() {
        return new PairResult(Direction.PUSH, "a", "GPU-a", "b", "GPU-b", Verdict.FAIL, 0.1, null,
                List.of(new StageResult(Stage.IMPORT, StageStatus.FAILED, 801, "CUDA_ERROR_NOT_SUPPORTED", 0.01,
                        "x")), null);
    }

    @Test
    void offByDefaultNeverSamples() {
        CrossDomainSample off = sample(Duration.ZERO);

        assertThat(off.take(AB)).isFalse();
        assertThat(off.findingFor(AB, C1, C2).code()).isEqualTo("DIFFERENT_IMEX_DOMAIN");
    }

    @Test
    void atMostOnePairPerIntervalAndEveryPairInTurn() {
        CrossDomainSample s = sample(Duration.ofSeconds(1));

        // round 1: the first pair offered is sampled, the others wait
        assertThat(List.of(s.take(AB), s.take(AC), s.take(AD))).containsExactly(true, false, false);
        now.addAndGet(2_000_000_000L);
        // round 2: AB had its turn, AC waits longest
        assertThat(List.of(s.take(AB), s.take(AC), s.take(AD))).containsExactly(false, true, false);
        now.addAndGet(500_000_000L);
        assertThat(s.take(AD)).as("within the interval").isFalse();
        now.addAndGet(1_500_000_000L);
        assertThat(List.of(s.take(AB), s.take(AC), s.take(AD))).containsExactly(false, false, true);
        now.addAndGet(2_000_000_000L);
        assertThat(s.take(AB)).as("all had a turn: AB again").isTrue();
    }

    @Test
    void aPairThatLeftDoesNotBlockTheOthers() {
        CrossDomainSample s = sample(Duration.ofSeconds(1));
        assertThat(s.take(AB)).isTrue();
        assertThat(s.take(AC)).isFalse(); // AC offered, never sampled, then its peer leaves
        for (int i = 0; i < 5; i++) {
            now.addAndGet(2_000_000_000L);
            s.take(AB);
        }
        now.addAndGet(2_000_000_000L);

        assertThat(s.take(AB)).isTrue();
    }

    @Test
    void aFailureIsTheExpectedInfoWithTheSamplesCode() {
        CrossDomainSample s = sample(Duration.ofSeconds(1));

        Finding f = s.record(AB, C1, C2, failedAtImport());

        assertThat(f.code()).isEqualTo("DIFFERENT_IMEX_DOMAIN");
        assertThat(f.severity().label()).isEqualTo("info");
        assertThat(f.evidence()).containsEntry("sample", "import CUDA_ERROR_NOT_SUPPORTED");
        assertThat(s.findingFor(AB, C1, C2)).isEqualTo(f);
    }

    /**
     * A sample that failed before the importer touched the exporter's memory (a drawn stage: the exporter's create or
     * export, the handle's trip, the importer's own address range) or was not probed shows nothing about the
     * domains: the pair keeps the last sample's finding.
     */
    @Test
    void aSampleThatNeverReachedTheExportKeepsTheLastFinding() {
        List<Stage> before = List.of(Stage.CREATE, Stage.EXPORT, Stage.TRANSFER, Stage.RESERVE);
        Stage stage = before.get(java.util.concurrent.ThreadLocalRandom.current().nextInt(before.size()));
        PairResult early = new PairResult(Direction.PUSH, "a", "GPU-a", "b", "GPU-b", Verdict.FAIL, 0.1, null,
                List.of(new StageResult(stage, StageStatus.FAILED, 2, "CUDA_ERROR_OUT_OF_MEMORY", 0.01, "x")), null);
        PairResult notProbed = new PairResult(Direction.PUSH, "a", "GPU-a", "b", "GPU-b", Verdict.NOT_PROBED, 0.1,
                null, List.of(), null);
        CrossDomainSample s = sample(Duration.ofSeconds(1));

        assertThat(s.record(AB, C1, C2, early).evidence()).as(stage.label()).doesNotContainKey("sample");
        assertThat(s.findingFor(AB, C1, C2).evidence()).doesNotContainKey("sample");
        Finding proven = s.record(AB, C1, C2, failedAtImport());
        assertThat(s.record(AB, C1, C2, early)).as(stage.label()).isEqualTo(proven);
        assertThat(s.record(AB, C1, C2, notProbed)).isEqualTo(proven);
        assertThat(s.findingFor(AB, C1, C2).evidence()).containsEntry("sample", "import CUDA_ERROR_NOT_SUPPORTED");
    }

    @Test
    void aPassAcrossDomainsIsNotIsolated() {
        CrossDomainSample s = sample(Duration.ofSeconds(1));

        Finding f = s.record(AB, C1, C2, passed());

        assertThat(f.code()).isEqualTo("IMEX_DOMAINS_NOT_ISOLATED");
        assertThat(f.severity().label()).isEqualTo("warning");
        assertThat(f.cause()).contains("a (" + C1 + ")", "b (" + C2 + ")");
        assertThat(s.findingFor(AB, C1, C2).code()).isEqualTo("IMEX_DOMAINS_NOT_ISOLATED");
        assertThat(s.findingFor(AC, C1, C2).code()).isEqualTo("DIFFERENT_IMEX_DOMAIN");
    }

    @Test
    void aPassBetweenOneCliqueUnderTwoClusterUuidsIsMembersDisagreeing() {
        Finding f = sample(Duration.ofSeconds(1)).record(AB, C1, OTHER_CLUSTER_C1, passed());

        assertThat(f.code()).isEqualTo("DOMAIN_MEMBERS_DISAGREE");
        assertThat(f.cause()).contains("clique 1 under two cluster UUIDs");
    }

    @Test
    void aNegativeIntervalIsRefusedWithThePropertyName() {
        assertThatThrownBy(() -> sample(Duration.ofSeconds(-1)))
                .hasMessageContaining("imexprobe.mesh.cross-domain-sample-interval");
    }
}
