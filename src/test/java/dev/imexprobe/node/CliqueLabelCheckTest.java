package dev.imexprobe.node;

import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.kubernetes.CliqueLabel;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static dev.imexprobe.testing.NodeReports.CLUSTER;
import static dev.imexprobe.testing.NodeReports.GPU0;
import static dev.imexprobe.testing.NodeReports.GPU1;
import static dev.imexprobe.testing.NodeReports.gpu;
import static dev.imexprobe.testing.NodeReports.inDomain;
import static org.assertj.core.api.Assertions.assertThat;

/** The nvidia.com/gpu.clique label beside NVML: used only where NVML has nothing, checked where it has. */
class CliqueLabelCheckTest {

    static final String DOMAIN7 = "fabric:" + CLUSTER + "/7";

    static CliqueLabel label(String value) {
        return new CliqueLabel(CliqueLabel.OK, value, null, Instant.EPOCH);
    }

    static GpuDevice fabric(int index, String uuid, int state, long clique) {
        return inDomain(gpu(index, uuid, new FabricInfo(3, state, 0, clique, state == 0 ? null : CLUSTER, 0, 1)));
    }

    @Test
    void theLabelGivesTheDomainOfAGpuNvmlCouldNotBeAskedAbout() {
        List<GpuDevice> gpus = List.of(inDomain(gpu(0, GPU0, null)));
        assertThat(gpus.get(0).imexDomain()).startsWith("host:");

        CliqueLabelCheck.Result r = CliqueLabelCheck.apply("gb200-07", gpus, label(CLUSTER + ".7"));

        assertThat(r.gpus().get(0).imexDomain()).isEqualTo(DOMAIN7);
        assertThat(r.view().usedFor()).containsExactly(0);
        assertThat(r.view().domain()).isEqualTo(DOMAIN7);
        assertThat(r.finding()).as("nothing to disagree with").isNull();
    }

    @Test
    void aLabelThatAgreesWithNvmlChangesNothing() {
        List<GpuDevice> gpus = List.of(fabric(0, GPU0, 3, 7), fabric(1, GPU1, 3, 7));

        CliqueLabelCheck.Result r = CliqueLabelCheck.apply("gb200-07", gpus, label(CLUSTER.toUpperCase() + ".7"));

        assertThat(r.gpus()).isEqualTo(gpus);
        assertThat(r.view().usedFor()).isEmpty();
        assertThat(r.finding()).isNull();
    }

    @Test
    void aLabelNamingAnotherCliqueIsAWarningNvmlWins() {
        List<GpuDevice> gpus = List.of(fabric(0, GPU0, 3, 7), fabric(1, GPU1, 3, 7));

        CliqueLabelCheck.Result r = CliqueLabelCheck.apply("gb200-07", gpus, label(CLUSTER + ".9"));

        assertThat(r.gpus()).as("NVML's domains stay").isEqualTo(gpus);
        assertThat(r.finding().is(FindingCode.CLIQUE_LABEL_MISMATCH)).isTrue();
        assertThat(r.finding().severity()).isEqualTo(Severity.WARNING);
        assertThat(r.finding().evidence()).containsEntry("label", CLUSTER + ".9")
                .containsEntry("labelDomain", "fabric:" + CLUSTER + "/9")
                .containsEntry("nvml", "GPU 0, 1: " + DOMAIN7).containsEntry("nvmlDomains", List.of(DOMAIN7));
        assertThat(r.finding().cause()).contains("gb200-07").doesNotContain("{");
    }

    @Test
    void aLabelOnANodeWhoseNvmlReportsNoFabricIsAWarningAJoiningGpuIsNot() {
        CliqueLabelCheck.Result none = CliqueLabelCheck.apply("h200-1", List.of(fabric(0, GPU0, 0, 0)),
                label(CLUSTER + ".7"));
        assertThat(none.finding().evidence()).containsEntry("nvml", "GPU 0: no NVLink fabric (NOT_SUPPORTED)");
        assertThat(none.gpus().get(0).imexDomain()).startsWith("host:");

        CliqueLabelCheck.Result joining = CliqueLabelCheck.apply("gb200-07", List.of(fabric(0, GPU0, 2, 7)),
                label(CLUSTER + ".9"));
        assertThat(joining.finding()).as("IN_PROGRESS: FABRIC_NOT_COMPLETED speaks").isNull();
    }

    @Test
    void anUnsetOrMalformedLabelIsShownAndNotUsed() {
        List<GpuDevice> gpus = List.of(inDomain(gpu(0, GPU0, null)), fabric(1, GPU1, 3, 7));

        CliqueLabelCheck.Result bad = CliqueLabelCheck.apply("n", gpus, label("not-a-clique"));
        assertThat(bad.view().domain()).isNull();
        assertThat(bad.view().detail()).contains("not <cluster UUID>.<clique ID>");
        assertThat(bad.gpus()).isEqualTo(gpus);
        assertThat(bad.finding()).isNull();

        CliqueLabelCheck.Result unset = CliqueLabelCheck.apply("n", gpus,
                new CliqueLabel(CliqueLabel.UNSET, null, "no label", Instant.EPOCH));
        assertThat(unset.view().state()).isEqualTo("unset");
        assertThat(unset.gpus()).isEqualTo(gpus);
        assertThat(unset.finding()).isNull();

        assertThat(CliqueLabelCheck.apply("n", gpus, null).view()).as("not enabled").isNull();
    }

    static dev.imexprobe.kubernetes.ComputeDomainStatus cd(String cliqueId) {
        return new dev.imexprobe.kubernetes.ComputeDomainStatus("ok", null, List.of(
                new dev.imexprobe.kubernetes.ComputeDomainStatus.Entry("gpu-jobs", "canary", "Ready", "Ready",
                        "10.1.0.7", cliqueId, 0, List.of())), Instant.EPOCH);
    }

    @Test
    void aComputeDomainPlacingTheNodeInAnotherCliqueThanNvmlIsADisagreement() {
        List<GpuDevice> gpus = List.of(fabric(0, GPU0, 3, 7), fabric(1, GPU1, 3, 7));

        assertThat(CliqueLabelCheck.computeDomains(gpus, cd(CLUSTER + ".7"))).isEmpty();
        assertThat(CliqueLabelCheck.computeDomains(gpus, cd(""))).as("no cliqueID: nothing to compare").isEmpty();
        assertThat(CliqueLabelCheck.computeDomains(List.of(inDomain(gpu(0, GPU0, null))), cd(CLUSTER + ".3")))
                .as("no NVML: nothing to compare").isEmpty();

        List<dev.imexprobe.finding.Finding> fs = CliqueLabelCheck.computeDomains(gpus, cd(CLUSTER + ".3"));
        assertThat(fs).singleElement().satisfies(f -> {
            assertThat(f.is(FindingCode.DOMAIN_MEMBERS_DISAGREE)).isTrue();
            assertThat(f.evidence()).containsEntry("computeDomain", "gpu-jobs/canary")
                    .containsEntry("cliqueId", CLUSTER + ".3")
                    .containsEntry("detail", "ComputeDomain gpu-jobs/canary lists this node with cliqueID " + CLUSTER
                            + ".3 (fabric:" + CLUSTER + "/3), but NVML says GPU 0, 1: " + DOMAIN7);
        });
    }
}
