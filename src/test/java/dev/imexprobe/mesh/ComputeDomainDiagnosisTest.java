package dev.imexprobe.mesh;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.kubernetes.ComputeDomainStatus;
import dev.imexprobe.kubernetes.ComputeDomainStatus.Member;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static dev.imexprobe.mesh.DomainDiagnosisTest.failed;
import static dev.imexprobe.mesh.DomainDiagnosisTest.ok;
import static dev.imexprobe.mesh.DomainDiagnosisTest.only;
import static org.assertj.core.api.Assertions.assertThat;

/** A Ready ComputeDomain held against the pairs between its nodes: which layer fails, and never a not_probed pair. */
class ComputeDomainDiagnosisTest {

    static ComputeDomainStatus cd(String status, Member... members) {
        return new ComputeDomainStatus(ComputeDomainStatus.OK, null, List.of(new ComputeDomainStatus.Entry("gpu-jobs",
                "canary", status, "Ready", "10.1.0.1", "c.1", 0, List.of(members))), Instant.EPOCH);
    }

    static PairState notProbed(String s, String t) {
        return new PairState(s, s + "-gpu", t, t + "-gpu", DomainDiagnosisTest.D, null, PairState.State.NOT_PROBED,
                null, null, null, null, 1.0, null, null, null, 0);
    }

    static final Member A = new Member("a", "Ready");
    static final Member B = new Member("b", "Ready");
    static final Member C = new Member("c", "Ready");

    @Test
    void readyWhileImportsAreRefusedWith800NamesTheImportersChannel() {
        List<PairState> pairs = List.of(ok("a", "b"), ok("b", "a"),
                failed("a", "c", "import", 800, "CUDA_ERROR_NOT_PERMITTED"),
                failed("b", "c", "import", 800, "CUDA_ERROR_NOT_PERMITTED"), ok("c", "a"), ok("c", "b"));

        List<Finding> fs = ComputeDomainDiagnosis.diagnose(cd("Ready", A, B, C), pairs);

        Finding f = only(fs, FindingCode.COMPUTE_DOMAIN_READY_CHANNEL_FAILS);
        assertThat(fs).hasSize(1);
        assertThat(f.severity()).isEqualTo(Severity.ERROR);
        assertThat(f.blame()).isEqualTo(Blame.TARGET);
        assertThat(f.evidence()).containsEntry("computeDomain", "gpu-jobs/canary").containsEntry("status", "Ready")
                .containsEntry("failedPairs", 2).containsEntry("importers", List.of("c"))
                .containsEntry("pairs", "a → c, b → c").containsEntry("nodes", "a: Ready, b: Ready, c: Ready")
                .containsEntry("driverResult", "import CUDA_ERROR_NOT_PERMITTED");
        assertThat(f.cause()).contains("IMEX channel of the importing pod on [c]").doesNotContain("{");
    }

    @Test
    void readyWhileTheHandleIsNotResolvedNamesTheDaemons() {
        List<PairState> pairs = List.of(failed("a", "b", "import", 801, "CUDA_ERROR_NOT_SUPPORTED"),
                failed("b", "a", "import", 801, "CUDA_ERROR_NOT_SUPPORTED"),
                failed("c", "a", "import", 400, "CUDA_ERROR_INVALID_HANDLE"));

        List<Finding> fs = ComputeDomainDiagnosis.diagnose(cd("Ready", A, B, C), pairs);

        Finding f = only(fs, FindingCode.COMPUTE_DOMAIN_READY_DAEMON_FAILS);
        assertThat(fs).hasSize(1);
        assertThat(f.blame()).isEqualTo(Blame.LOCAL);
        assertThat(f.evidence()).containsEntry("failedPairs", 3).containsEntry("pairs", "a → b, b → a, c → a")
                .containsEntry("driverResult", "import CUDA_ERROR_NOT_SUPPORTED");
        assertThat(f.cause()).contains("IMEX daemons");
    }

    @Test
    void notProbedPairsSameNodePairsAndFailuresBeforeTheImportNeverCount() {
        List<PairState> pairs = List.of(notProbed("a", "b"), notProbed("b", "a"),
                failed("a", "a", "import", 101, "CUDA_ERROR_INVALID_DEVICE"),
                failed("b", "c", "create", 800, "CUDA_ERROR_NOT_PERMITTED"),
                new PairState("c", null, "a", null, PairState.State.UNKNOWN, null, null, null, null, null, null, null,
                        null, 0));

        assertThat(ComputeDomainDiagnosis.diagnose(cd("Ready", A, B, C), pairs)).isEmpty();
    }

    @Test
    void aDomainThatDoesNotSayReadyOrDoesNotListANodeIsNotHeldAgainstItsPairs() {
        List<PairState> pairs = List.of(failed("a", "b", "import", 800, "CUDA_ERROR_NOT_PERMITTED"),
                failed("a", "x", "import", 800, "CUDA_ERROR_NOT_PERMITTED"));

        assertThat(ComputeDomainDiagnosis.diagnose(cd("NotReady", A, new Member("b", "NotReady")), pairs))
                .as("b's daemon is not ready: its failures are explained").isEmpty();
        assertThat(ComputeDomainDiagnosis.diagnose(cd("NotReady", A, new Member("b", null)), pairs))
                .as("no per-node status: the ComputeDomain's NotReady counts").isEmpty();
        assertThat(ComputeDomainDiagnosis.diagnose(cd("Ready", A, new Member("b", null)), pairs))
                .as("no per-node status: the ComputeDomain's Ready counts").hasSize(1)
                .allMatch(f -> f.evidence().get("nodes").equals("a: Ready, b: ComputeDomain Ready"));
        assertThat(ComputeDomainDiagnosis.diagnose(new ComputeDomainStatus(ComputeDomainStatus.ABSENT, "404",
                List.of(), Instant.EPOCH), pairs)).isEmpty();
        assertThat(ComputeDomainDiagnosis.diagnose(null, pairs)).isEmpty();
    }

    @Test
    void manyPairsAreCountedAndTheFirstOnesNamed() {
        List<PairState> pairs = new ArrayList<>();
        List<Member> members = new ArrayList<>(List.of(new Member("t", "Ready")));
        for (int i = 0; i < 9; i++) {
            pairs.add(failed("s" + i, "t", "import", 800, "CUDA_ERROR_NOT_PERMITTED"));
            members.add(new Member("s" + i, "Ready"));
        }

        Finding f = only(ComputeDomainDiagnosis.diagnose(cd("Ready", members.toArray(Member[]::new)), pairs),
                FindingCode.COMPUTE_DOMAIN_READY_CHANNEL_FAILS);

        assertThat(f.evidence()).containsEntry("failedPairs", 9)
                .containsEntry("pairs", "s0 → t, s1 → t, s2 → t, s3 → t, s4 → t, s5 → t, … 3 more");
    }
}
