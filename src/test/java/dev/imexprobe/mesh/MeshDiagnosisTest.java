package dev.imexprobe.mesh;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.mesh.MeshDiagnosis.Outcome;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.BiPredicate;

import static org.assertj.core.api.Assertions.assertThat;

class MeshDiagnosisTest {

    /** Every ordered pair of distinct nodes, failed where {@code fails} says so. */
    private static List<Outcome> fullMesh(List<String> nodes, BiPredicate<String, String> fails) {
        List<Outcome> out = new ArrayList<>();
        for (String s : nodes) {
            for (String t : nodes) {
                if (!s.equals(t)) {
                    out.add(new Outcome(s, t, fails.test(s, t)));
                }
            }
        }
        return out;
    }

    private static final List<String> FOUR = List.of("node-a", "node-b", "node-c", "node-d");

    @Test
    void manySourcesFailingIntoOneTargetBlameTheTarget() {
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(fullMesh(FOUR, (s, t) -> t.equals("node-c")));

        assertThat(b.failingTargets()).containsExactly("node-c");
        assertThat(b.failingSources()).isEmpty();
        assertThat(b.findings()).hasSize(1);
        Finding f = b.findings().getFirst();
        assertThat(f.code()).isEqualTo("TARGET_FAILING");
        assertThat(f.severity()).isEqualTo(Severity.ERROR);
        assertThat(f.blame()).isEqualTo(Blame.TARGET);
        assertThat(f.evidence()).containsEntry("targetNode", "node-c").containsEntry("failedSources", 3L)
                .containsEntry("sources", 3).containsEntry("failingFrom", List.of("node-a", "node-b", "node-d"));
        assertThat(f.cause()).isEqualTo("3 of 3 sources fail to import on node-c: the fault is at the target.");
        assertThat(b.forPair("node-a", "node-c")).isEqualTo(Blame.TARGET);
        assertThat(b.forPair("node-c", "node-a")).isNull();
        assertThat(b.forPair("node-a", "node-b")).isNull();
    }

    @Test
    void oneSourceFailingOnEveryTargetBlamesTheSource() {
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(fullMesh(FOUR, (s, t) -> s.equals("node-b")));

        assertThat(b.failingSources()).containsExactly("node-b");
        assertThat(b.failingTargets()).isEmpty();
        assertThat(b.findings()).hasSize(1);
        Finding f = b.findings().getFirst();
        assertThat(f.code()).isEqualTo("SOURCE_FAILING");
        assertThat(f.blame()).isEqualTo(Blame.SOURCE);
        assertThat(f.evidence()).containsEntry("sourceNode", "node-b").containsEntry("failedTargets", 3L)
                .containsEntry("targets", 3).containsEntry("failingTo", List.of("node-a", "node-c", "node-d"));
        assertThat(b.forPair("node-b", "node-d")).isEqualTo(Blame.SOURCE);
        assertThat(b.forPair("node-d", "node-b")).isNull();
    }

    @Test
    void onePairAloneBlamesNobody() {
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(
                fullMesh(FOUR, (s, t) -> s.equals("node-a") && t.equals("node-b")));

        assertThat(b.findings()).isEmpty();
        assertThat(b.failingTargets()).isEmpty();
        assertThat(b.failingSources()).isEmpty();
        assertThat(b.forPair("node-a", "node-b")).isNull();
    }

    @Test
    void aSingleFailedPairOfTwoNodesBlamesNobody() {
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(List.of(new Outcome("node-a", "node-b", true)));

        assertThat(b.findings()).isEmpty();
    }

    @Test
    void twoWitnessesAreEnoughInAThreeNodeMesh() {
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(
                fullMesh(List.of("node-a", "node-b", "node-c"), (s, t) -> t.equals("node-a")));

        assertThat(b.failingTargets()).containsExactly("node-a");
        assertThat(b.failingSources()).isEmpty();
    }

    @Test
    void aMinorityOfFailingSourcesBlamesNobody() {
        List<String> six = List.of("n1", "n2", "n3", "n4", "n5", "n6");
        // 2 of the 5 sources of n6 fail: not most of them.
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(
                fullMesh(six, (s, t) -> t.equals("n6") && (s.equals("n1") || s.equals("n2"))));

        assertThat(b.findings()).isEmpty();
    }

    @Test
    void halfOfTheSourcesIsNotAMajority() {
        List<String> five = List.of("n1", "n2", "n3", "n4", "n5");
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(
                fullMesh(five, (s, t) -> t.equals("n5") && (s.equals("n1") || s.equals("n2"))));

        assertThat(b.failingTargets()).isEmpty();
    }

    @Test
    void sameNodePairsAreNoWitnessesEitherWay() {
        List<Outcome> outcomes = new ArrayList<>(fullMesh(FOUR, (s, t) -> false));
        // Several GPUs of node-d failing among themselves (the per-GPU seed case) and one cross-node failure.
        for (int i = 0; i < 6; i++) {
            outcomes.add(new Outcome("node-d", "node-d", true));
        }
        outcomes.add(new Outcome("node-a", "node-d", true));

        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(outcomes);

        assertThat(b.findings()).isEmpty();
    }

    @Test
    void severalGpusOfOneSourceNodeAreOneWitness() {
        List<Outcome> outcomes = new ArrayList<>(fullMesh(FOUR, (s, t) -> false));
        for (int gpu = 0; gpu < 8; gpu++) {
            outcomes.add(new Outcome("node-a", "node-d", true));
        }

        assertThat(MeshDiagnosis.diagnose(outcomes).findings()).isEmpty();
    }

    @Test
    void oneFailingGpuPairOfANodeMakesThatNodePairFail() {
        List<Outcome> outcomes = new ArrayList<>(fullMesh(FOUR, (s, t) -> false));
        outcomes.add(new Outcome("node-a", "node-d", true));
        outcomes.add(new Outcome("node-b", "node-d", true));

        assertThat(MeshDiagnosis.diagnose(outcomes).failingTargets()).containsExactly("node-d");
    }

    @Test
    void twoBadTargetsAreBothBlamedAndTheirSourcesAreNot() {
        MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(
                fullMesh(FOUR, (s, t) -> t.equals("node-c") || t.equals("node-d")));

        assertThat(b.failingTargets()).containsExactlyInAnyOrder("node-c", "node-d");
        assertThat(b.failingSources()).as("a source is not blamed for targets already blamed").isEmpty();
        assertThat(b.findings()).extracting(Finding::code).containsOnly("TARGET_FAILING");
    }

    @Test
    void aHealthyMeshBlamesNobody() {
        assertThat(MeshDiagnosis.diagnose(fullMesh(FOUR, (s, t) -> false)).findings()).isEmpty();
        assertThat(MeshDiagnosis.diagnose(List.of()).findings()).isEmpty();
    }

    @Test
    void randomMeshesWithOneBadTargetAlwaysBlameExactlyIt() {
        Random random = new Random(20261202);
        for (int run = 0; run < 500; run++) {
            RandomMesh mesh = new RandomMesh(random);
            String bad = mesh.nodes.get(random.nextInt(mesh.nodes.size()));
            List<Outcome> outcomes = mesh.outcomes(random, (s, t) -> t.equals(bad));

            MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(outcomes);

            assertThat(b.failingTargets()).as("run %d: %s, bad target %s", run, mesh, bad).isEqualTo(Set.of(bad));
            assertThat(b.failingSources()).as("run %d: %s", run, mesh).isEmpty();
            assertThat(b.findings()).singleElement().satisfies(f -> {
                assertThat(f.code()).isEqualTo("TARGET_FAILING");
                assertThat(f.evidence()).containsEntry("targetNode", bad);
            });
        }
    }

    @Test
    void randomMeshesWithOneBadSourceAlwaysBlameExactlyIt() {
        Random random = new Random(7);
        for (int run = 0; run < 500; run++) {
            RandomMesh mesh = new RandomMesh(random);
            String bad = mesh.nodes.get(random.nextInt(mesh.nodes.size()));
            List<Outcome> outcomes = mesh.outcomes(random, (s, t) -> s.equals(bad));

            MeshDiagnosis.Blame b = MeshDiagnosis.diagnose(outcomes);

            assertThat(b.failingSources()).as("run %d: %s, bad source %s", run, mesh, bad).isEqualTo(Set.of(bad));
            assertThat(b.failingTargets()).as("run %d: %s", run, mesh).isEmpty();
        }
    }

    /**
     * 3 to 9 nodes with 1 to 4 GPUs each, every GPU pair measured (in random order), and same-node pairs failing
     * at random: they must not matter.
     */
    private static final class RandomMesh {
        final List<String> nodes = new ArrayList<>();
        final List<Integer> gpus = new ArrayList<>();

        RandomMesh(Random random) {
            int n = 3 + random.nextInt(7);
            for (int i = 0; i < n; i++) {
                nodes.add("node-" + Integer.toString(random.nextInt(1 << 20), 36) + "-" + i);
                gpus.add(1 + random.nextInt(4));
            }
        }

        List<Outcome> outcomes(Random random, BiPredicate<String, String> crossNodeFails) {
            List<Outcome> out = new ArrayList<>();
            for (int s = 0; s < nodes.size(); s++) {
                for (int t = 0; t < nodes.size(); t++) {
                    for (int i = 0; i < gpus.get(s) * gpus.get(t); i++) {
                        String sn = nodes.get(s);
                        String tn = nodes.get(t);
                        boolean failed = s == t ? random.nextBoolean() : crossNodeFails.test(sn, tn);
                        if (s != t || gpus.get(s) > 1) {
                            out.add(new Outcome(sn, tn, failed));
                        }
                    }
                }
            }
            java.util.Collections.shuffle(out, random);
            return out;
        }

        @Override
        public String toString() {
            return nodes + " gpus " + gpus;
        }
    }
}
