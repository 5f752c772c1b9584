package dev.imexprobe.agent;

import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.testing.NodeReports;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ReadinessHealthTest {

    private static final AgentProperties.Readiness ALL = new AgentProperties.Readiness(true, true, true);

    private static Health health(NodeReport report, AgentProperties.Readiness require) {
        return new ReadinessHealth(() -> report, require).health();
    }

    @Test
    void readyWithDriverGpuAndChannel() {
        Health h = health(NodeReports.twoGpus(1, ImexDaemonState.NOT_INSTALLED), ALL);

        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("driver", true).containsEntry("gpus", 2)
                .containsEntry("usableChannels", 1L).doesNotContainKey("reason");
    }

    @Test
    void notReadyWithoutADriverAndSaysWhy() {
        Health h = health(NodeReports.withoutDriver(), ALL);

        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat(h.getDetails()).containsEntry("driver", false).containsEntry("gpus", 0);
        assertThat((String) h.getDetails().get("reason")).startsWith(
                "no usable NVIDIA driver library; no GPU visible; no usable IMEX channel (see GET /v1/node;");
    }

    @Test
    void notReadyWithoutAChannel() {
        Health h = health(NodeReports.twoGpus(0, ImexDaemonState.NOT_INSTALLED), ALL);

        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) h.getDetails().get("reason")).startsWith("no usable IMEX channel (see GET /v1/node;")
                .contains("imexprobe.readiness.* relaxes these");
    }

    @Test
    void notReadyWithoutAGpu() {
        Health h = health(NodeReports.report(List.of(), 1, ImexDaemonState.NOT_INSTALLED), ALL);

        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) h.getDetails().get("reason")).startsWith("no GPU visible (");
    }

    @Test
    void eachRequirementCanBeSwitchedOff() {
        assertThat(health(NodeReports.twoGpus(0, ImexDaemonState.NOT_INSTALLED),
                new AgentProperties.Readiness(true, true, false)).getStatus()).isEqualTo(Status.UP);
        assertThat(health(NodeReports.report(List.of(), 1, ImexDaemonState.NOT_INSTALLED),
                new AgentProperties.Readiness(true, false, true)).getStatus()).isEqualTo(Status.UP);
        assertThat(health(NodeReports.withoutDriver(), new AgentProperties.Readiness(false, false, false))
                .getStatus()).isEqualTo(Status.UP);
        Health h = health(NodeReports.withoutDriver(), new AgentProperties.Readiness(false, true, false));
        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) h.getDetails().get("reason")).startsWith("no GPU visible (");
    }

    @Test
    void aReportThatCannotBeMadeIsDown() {
        Health h = new ReadinessHealth(() -> {
            throw new IllegalStateException("inspection broke");
        }, ALL).health();

        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
    }
}
