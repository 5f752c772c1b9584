package dev.imexprobe.mesh;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class DomainDiagnosisTest {

    static final String D = "fabric:6a1c7b2e-0000-4000-8000-00000000c0de/1";

    static PairState ok(String s, String t) {
        return new PairState(s, s + "-gpu", t, t + "-gpu", D, null, PairState.State.OK, null, null, null, null, 1.0,
                null, null, 0.1, 0);
    }

    static PairState failed(String s, String t, String stage, int code, String name) {
        return new PairState(s, s + "-gpu", t, t + "-gpu", D, null, PairState.State.FAILED, stage, code, name, null,
                1.0, null, null, 0.1, 1);
    }

    /** Every ordered pair among the nodes: ok within a group, the given failure across. */
    static List<PairState> mesh(List<List<String>> groups, String stage, int code, String name) {
        List<PairState> out = new ArrayList<>();
        for (List<String> a : groups) {
            for (List<String> b : groups) {
                for (String s : a) {
                    for (String t : b) {
                        if (!s.equals(t)) {
                            out.add(a == b ? ok(s, t) : failed(s, t, stage, code, name));
                        }
                    }
                }
            }
        }
        return out;
    }

    static Finding only(List<Finding> fs, FindingCode code) {
        List<Finding> of = fs.stream().filter(f -> f.is(code)).toList();
        assertThat(of).as("%s in %s", code, fs).hasSize(1);
        return of.get(0);
    }

    @Test
    void twoGroupsThatCannotImportAcrossAreASplitClique() {
        List<Finding> fs = DomainDiagnosis.diagnose(mesh(List.of(List.of("a1", "a2"), List.of("b1", "b2")),
                "import", 801, "CUDA_ERROR_NOT_SUPPORTED"));

        Finding f = only(fs, FindingCode.CLIQUE_SPLIT);
        assertThat(f.evidence()).containsEntry("domain", D).containsEntry("failedPairs", 8)
                .containsEntry("groups", List.of("[a1, a2]", "[b1, b2]"))
                .containsEntry("driverResult", "import CUDA_ERROR_NOT_SUPPORTED");
        assertThat(fs).noneMatch(x -> x.is(FindingCode.DOMAIN_CLAIM_UNPROVEN));
    }

    @Test
    void accessNotSupportedAcrossIsASplitToo() {
        List<Finding> fs = DomainDiagnosis.diagnose(mesh(List.of(List.of("a1", "a2"), List.of("b1", "b2")),
                "access", 801, "CUDA_ERROR_NOT_SUPPORTED"));

        assertThat(only(fs, FindingCode.CLIQUE_SPLIT).evidence()).containsEntry("driverResult",
                "access CUDA_ERROR_NOT_SUPPORTED");
    }

    @Test
    void aLoneNodeTheOthersCannotImportFromClaimsADomainItIsNotIn() {
        List<Finding> fs = DomainDiagnosis.diagnose(mesh(List.of(List.of("c1", "c2", "c3"), List.of("x")),
                "import", 801, "CUDA_ERROR_NOT_SUPPORTED"));

        Finding f = only(fs, FindingCode.DOMAIN_CLAIM_UNPROVEN);
        assertThat(f.evidence()).containsEntry("node", "x").containsEntry("failedWith", List.of("c1", "c2", "c3"));
        assertThat(f.cause()).startsWith("x reports NVLink domain " + D);
        assertThat(fs).noneMatch(x -> x.is(FindingCode.CLIQUE_SPLIT));
    }

    @Test
    void aMissingChannelIsNotADomainQuestion() {
        // 800 at import: the importer lacks the channel (IMPORT_NOT_PERMITTED), whatever the domain
        assertThat(DomainDiagnosis.diagnose(mesh(List.of(List.of("a1", "a2"), List.of("b1", "b2")),
                "import", 800, "CUDA_ERROR_NOT_PERMITTED"))).isEmpty();
        assertThat(DomainDiagnosis.diagnose(mesh(List.of(List.of("c1", "c2"), List.of("x")),
                "create", 800, "CUDA_ERROR_NOT_PERMITTED"))).isEmpty();
    }

    @Test
    void twoNodesAloneProveNothing() {
        assertThat(DomainDiagnosis.diagnose(mesh(List.of(List.of("a"), List.of("b")), "import", 801,
                "CUDA_ERROR_NOT_SUPPORTED"))).isEmpty();
    }

    @Test
    void oneWitnessIsNotEnoughAgainstALoneNode() {
        List<PairState> ps = new ArrayList<>(mesh(List.of(List.of("c1", "c2")), "import", 801, "x"));
        ps.add(failed("c1", "x", "import", 801, "CUDA_ERROR_NOT_SUPPORTED"));

        assertThat(DomainDiagnosis.diagnose(ps)).isEmpty();
    }

    @Test
    void pairsAcrossDomainsAndWithinANodeAreLeftOut() {
        List<PairState> ps = new ArrayList<>();
        for (PairState p : mesh(List.of(List.of("a1", "a2"), List.of("b1", "b2")), "import", 801, "N")) {
            ps.add(p.state() == PairState.State.FAILED
                    ? new PairState(p.sourceNode(), p.sourceGpu(), p.targetNode(), p.targetGpu(), D, "host:other",
                    PairState.State.NOT_PROBED, null, null, null, null, 1.0, null, null, null, 0) : p);
        }
        ps.add(failed("a1", "a1", "import", 801, "N"));

        assertThat(DomainDiagnosis.diagnose(ps)).isEmpty();
    }

    @Test
    void aSampleThatPassedIsLiftedIntoTheViewsFindings() {
        Finding sample = FindingCode.IMEX_DOMAINS_NOT_ISOLATED.finding(Map.of("sourceNode", "a", "targetNode", "b",
                "sourceDomain", D, "targetDomain", "host:b"));
        PairState p = new PairState("a", "ga", "b", "gb", D, "host:b", PairState.State.NOT_PROBED, null, null, null,
                sample, 1.0, null, null, null, 0);

        assertThat(DomainDiagnosis.diagnose(List.of(p))).containsExactly(sample);
    }
}
