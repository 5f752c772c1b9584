package dev.imexprobe.node;

import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.testing.NodeReports;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fabric findings of one GPU: joining vs stuck (the agent's clock), and the health mask bits named. */
class LocalDiagnosisFabricTest {

    private static final String CLUSTER = NodeReports.CLUSTER;
    /** Every mask field FALSE, configuration NONE: what a healthy v3 GPU reports. */
    private static final long CLEAN = 2L | 2L << 2 | 2L << 4 | 2L << 6 | 1L << 8;

    private final MutableClock clock = new MutableClock();

    private static GpuDevice gpu(FabricInfo f) {
        return NodeReports.gpu(0, NodeReports.GPU0, f);
    }

    private static FabricInfo state(int state) {
        return new FabricInfo(3, state, 0, 7, CLUSTER, 0, 0);
    }

    private static FabricInfo completed(long mask, int summary) {
        return new FabricInfo(3, FabricInfo.STATE_COMPLETED, 0, 7, CLUSTER, mask, summary);
    }

    @Test
    void inProgressIsJoiningUntilTheGraceEndsThenStuck() {
        FabricJoinClock join = new FabricJoinClock(Duration.ofMinutes(5), clock);

        Finding first = LocalDiagnosis.fabric(gpu(state(2)), state(2), join);
        clock.advance(Duration.ofMinutes(4));
        Finding before = LocalDiagnosis.fabric(gpu(state(2)), state(2), join);
        clock.advance(Duration.ofMinutes(1));
        Finding after = LocalDiagnosis.fabric(gpu(state(2)), state(2), join);

        assertThat(first.code()).isEqualTo("FABRIC_NOT_COMPLETED");
        assertThat(before.code()).isEqualTo("FABRIC_NOT_COMPLETED");
        assertThat(after.code()).isEqualTo("FABRIC_STATE_STUCK");
        assertThat(after.severity()).isEqualTo(Severity.ERROR);
        assertThat(after.evidence()).containsEntry("seconds", 300L).containsEntry("stuckAfterSeconds", 300L)
                .containsEntry("state", "IN_PROGRESS");
        assertThat(after.cause()).contains("IN_PROGRESS for 300 s");
    }

    @Test
    void aStateChangeRestartsTheClock() {
        FabricJoinClock join = new FabricJoinClock(Duration.ofSeconds(60), clock);
        LocalDiagnosis.fabric(gpu(state(1)), state(1), join);
        clock.advance(Duration.ofSeconds(59));
        LocalDiagnosis.fabric(gpu(state(2)), state(2), join); // NOT_STARTED -> IN_PROGRESS: it moves
        clock.advance(Duration.ofSeconds(59));

        assertThat(LocalDiagnosis.fabric(gpu(state(2)), state(2), join).code()).isEqualTo("FABRIC_NOT_COMPLETED");
        clock.advance(Duration.ofSeconds(1));
        assertThat(LocalDiagnosis.fabric(gpu(state(2)), state(2), join).code()).isEqualTo("FABRIC_STATE_STUCK");
    }

    @Test
    void withoutAClockNothingIsStuck() {
        assertThat(LocalDiagnosis.fabric(gpu(state(1)), state(1), null).code()).isEqualTo("FABRIC_NOT_COMPLETED");
    }

    @Test
    void aNegativeGraceIsRefusedWithThePropertyName() {
        assertThatThrownBy(() -> new FabricJoinClock(Duration.ofSeconds(-1), clock))
                .hasMessageContaining("imexprobe.node.fabric-stuck-after");
    }

    @Test
    void degradedBandwidthAndRouteRecoveryAreNamedAsWarnings() {
        long mask = (CLEAN & ~0xFL) | 1L | 1L << 2; // DEGRADED_BW TRUE, ROUTE_RECOVERY TRUE

        Finding f = LocalDiagnosis.fabric(gpu(completed(mask, 1)), completed(mask, 1), null);

        assertThat(f.code()).isEqualTo("FABRIC_DEGRADED");
        assertThat(f.severity()).isEqualTo(Severity.WARNING);
        assertThat(f.evidence()).containsEntry("flags", "DEGRADED_BW, ROUTE_RECOVERY");
        assertThat(f.cause()).contains("(DEGRADED_BW, ROUTE_RECOVERY)");
    }

    @Test
    void routeRecoveryAloneIsDegraded() {
        long mask = (CLEAN & ~0xCL) | 1L << 2;

        Finding f = LocalDiagnosis.fabric(gpu(completed(mask, 1)), completed(mask, 1), null);

        assertThat(f.code()).isEqualTo("FABRIC_DEGRADED");
        assertThat(f.evidence()).containsEntry("flags", "ROUTE_RECOVERY");
    }

    @Test
    void unhealthyRouteAndWrongConfigurationAreErrorsNamingEveryBit() {
        long mask = (CLEAN & ~0xF30L) | 1L << 4 | 4L << 8; // ROUTE_UNHEALTHY TRUE, NO_PARTITION

        Finding f = LocalDiagnosis.fabric(gpu(completed(mask, 2)), completed(mask, 2), null);

        assertThat(f.code()).isEqualTo("FABRIC_UNHEALTHY");
        assertThat(f.evidence()).containsEntry("flags",
                "ROUTE_UNHEALTHY, INCORRECT_CONFIGURATION=NO_PARTITION, SUMMARY_UNHEALTHY");
    }

    @Test
    void aCleanMaskSaysNothing() {
        assertThat(LocalDiagnosis.fabric(gpu(completed(CLEAN, 1)), completed(CLEAN, 1), null)).isNull();
        assertThat(completed(CLEAN, 1).problems()).isEqualTo("none");
    }

    @Test
    void gpusOfOneNodeInTwoNvlinkDomainsDisagree() {
        String other = "00000000-1111-4000-8000-000000000001";
        GpuDevice g0 = NodeReports.gpu(0, NodeReports.GPU0, completed(CLEAN, 1));
        GpuDevice g1 = NodeReports.gpu(1, NodeReports.GPU1, new FabricInfo(3, 3, 0, 7, other, CLEAN, 1));
        GpuDevice g2 = NodeReports.gpu(2, "GPU-3", completed(CLEAN, 1));

        Finding f = LocalDiagnosis.membersDisagree(java.util.List.of(g0, g1, g2));

        assertThat(f.code()).isEqualTo("DOMAIN_MEMBERS_DISAGREE");
        assertThat(f.severity()).isEqualTo(Severity.WARNING);
        assertThat(f.evidence().get("gpus")).isEqualTo(java.util.List.of("GPU 1 in fabric:" + other + "/7",
                "GPU 0, 2 in fabric:" + CLUSTER + "/7"));
    }

    @Test
    void oneDomainOrUnregisteredGpusDoNotDisagree() {
        GpuDevice g0 = NodeReports.gpu(0, NodeReports.GPU0, completed(CLEAN, 1));
        GpuDevice g1 = NodeReports.gpu(1, NodeReports.GPU1, state(2)); // still joining: not a member yet

        assertThat(LocalDiagnosis.membersDisagree(java.util.List.of(g0, g1))).isNull();
        assertThat(LocalDiagnosis.membersDisagree(java.util.List.of(g0,
                NodeReports.gpu(1, NodeReports.GPU1, completed(CLEAN, 1))))).isNull();
    }

    static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-12-04T04:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
