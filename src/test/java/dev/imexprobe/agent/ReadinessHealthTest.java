package dev.imexprobe.agent;

import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.testing.NodeReports;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Ready means serving: no node fault makes the agent unready; the details say what the node report says. */
class ReadinessHealthTest {

    private static Health health(NodeReport report) {
        return new ReadinessHealth(() -> report).health();
    }

    @Test
    void readyWithDriverGpuAndChannel() {
        Health h = health(NodeReports.twoGpus(1, ImexDaemonState.NOT_INSTALLED));

        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("driver", true).containsEntry("gpus", 2)
                .containsEntry("usableChannels", 1L).doesNotContainKey("reason");
    }

    @Test
    void readyWithoutADriverAndTheDetailsSayWhatIsMissing() {
        NodeReport report = NodeReports.withoutDriver();
        Health h = health(report);

        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("driver", false).containsEntry("gpus", 0)
                .containsEntry("findings", report.findings().stream().map(f -> f.code()).toList());
    }

    @Test
    void readyWithoutAChannelOrAGpu() {
        assertThat(health(NodeReports.twoGpus(0, ImexDaemonState.NOT_INSTALLED)).getStatus()).isEqualTo(Status.UP);
        Health noGpu = health(NodeReports.report(List.of(), 1, ImexDaemonState.NOT_INSTALLED));
        assertThat(noGpu.getStatus()).isEqualTo(Status.UP);
        assertThat(noGpu.getDetails()).containsEntry("gpus", 0);
    }

    @Test
    void aReportThatCannotBeMadeLeavesTheAgentReadyAndSaysSo() {
        Health h = new ReadinessHealth(() -> {
            throw new IllegalStateException("inspection broke");
        }).health();

        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat((String) h.getDetails().get("nodeReport")).isEqualTo(
                "not available: inspection broke (see GET /v1/node)");
    }
}
