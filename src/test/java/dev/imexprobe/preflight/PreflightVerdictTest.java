package dev.imexprobe.preflight;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;
import dev.imexprobe.testing.ProbeResults;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The sum of a preflight: exit code, verdict, whom each failing pair blames, what to do next. */
class PreflightVerdictTest {

    static final Instance A0 = new Instance("id-a0", "job-0:8080", "node-a", null, List.of("GPU-a0"));
    static final Instance A1 = new Instance("id-a1", "job-1:8080", "node-a", "10.0.0.2:8080", List.of("GPU-a1"));
    static final Instance B0 = new Instance("id-b0", "job-2:8080", "node-b", "10.0.0.3:8080", List.of("GPU-b0"));
    static final Map<String, Instance> ALL = map(A0, A1, B0);

    static Map<String, Instance> map(Instance... instances) {
        Map<String, Instance> m = new LinkedHashMap<>();
        for (Instance i : instances) {
            m.put(i.id(), i);
        }
        return m;
    }

    /** exporter → importer, passing unless a failure is given. */
    static PreflightPair pair(Instance exporter, Instance importer, Stage stage, int code) {
        PairResult r = stage == null
                ? ProbeResults.pass(exporter.node(), exporter.gpus().getFirst(), importer.node(), importer.gpus().getFirst())
                : ProbeResults.failAt(stage, CuResult.of(code), exporter.node(), exporter.gpus().getFirst(),
                importer.node(), importer.gpus().getFirst());
        return new PreflightPair(exporter.id(), importer.id(), r);
    }

    static List<PreflightPair> allToAll(java.util.function.BiFunction<Instance, Instance, PreflightPair> f) {
        List<PreflightPair> pairs = new ArrayList<>();
        for (Instance e : ALL.values()) {
            for (Instance i : ALL.values()) {
                if (e != i) {
                    pairs.add(f.apply(e, i));
                }
            }
        }
        Collections.shuffle(pairs, new Random(pairs.hashCode()));
        return pairs;
    }

    @Test
    void everyPairPassingIsExitZeroWithoutAVerdict() {
        PreflightReport r = PreflightVerdict.judge(3, A0.id(), ALL, allToAll((e, i) -> pair(e, i, null, 0)), List.of(), 1.0);

        assertThat(r.exitCode()).isZero();
        assertThat(r.result()).isEqualTo("pass");
        assertThat(r.verdict()).isNull();
        assertThat(r.instances()).extracting(Instance::id).containsExactly("id-a0", "id-a1", "id-b0");
        assertThat(r.pairs()).hasSize(6);
        assertThat(r.pairs().getFirst().exporter()).as("sorted by exporter name").isEqualTo("id-a0");
    }

    @Test
    void sameNodeImportsFailingWhileCrossNodePassIsTheSeedVerdictWithTheLadderStepForThatNode() {
        List<PreflightPair> pairs = allToAll((e, i) -> e.node().equals(i.node()) ? pair(e, i, Stage.IMPORT, 801)
                : pair(e, i, null, 0));

        PreflightReport r = PreflightVerdict.judge(3, B0.id(), ALL, pairs, List.of(), 1.0);

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.verdict().code()).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
        assertThat(r.nextSteps()).hasSize(2);
        assertThat(r.nextSteps().getFirst()).startsWith("Next on node node-a:").contains("ladder");
        assertThat(r.nextSteps().get(1)).startsWith("4 cross-node pair(s) passed").contains("docs/same-node.md");
        assertThat(r.findings()).extracting(PreflightReport.Blamed::instance)
                .as("the importer of each failing pair").containsExactlyInAnyOrder("job-0:8080", "job-1:8080");
    }

    @Test
    void oneInstanceWithoutAChannelIsBlamedAsExporterAndAsImporter() {
        List<PreflightPair> pairs = allToAll((e, i) -> e == B0 ? pair(e, i, Stage.CREATE, 800)
                : i == B0 ? pair(e, i, Stage.IMPORT, 800) : pair(e, i, null, 0));

        PreflightReport r = PreflightVerdict.judge(3, A0.id(), ALL, pairs, List.of(), 1.0);

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.findings()).hasSize(2).allSatisfy(b -> {
            assertThat(b.instance()).isEqualTo("job-2:8080");
            assertThat(b.node()).isEqualTo("node-b");
            assertThat(b.pairs()).isEqualTo(2);
        });
        assertThat(r.findings()).extracting(b -> b.finding().code())
                .containsExactlyInAnyOrder("CREATE_NOT_PERMITTED", "IMPORT_NOT_PERMITTED");
        assertThat(r.verdict().code()).isIn("CREATE_NOT_PERMITTED", "IMPORT_NOT_PERMITTED");
        assertThat(r.nextSteps().getFirst()).startsWith("Start with job-2:8080 (node node-b)");
    }

    @Test
    void aPeerThatDidNotAnswerIsBlamedAsTheExporterTheImporterCalled() {
        PreflightPair p = new PreflightPair(B0.id(), A0.id(), pulled(
                ProbeResults.unreachable("node-b", "GPU-b0", "10.0.0.3:8080", "node-a", "GPU-a0"), Blame.SOURCE));

        assertThat(PreflightVerdict.blamedId(p)).isEqualTo(B0.id());
    }

    @Test
    void anImporterWithoutATokenIsBlamedItselfNotTheExporterThatRefusedIt() {
        PairResult refused = ProbeResults.unreachable("node-b", "GPU-b0", "10.0.0.3:8080", "node-a", "GPU-a0");
        Finding noToken = FindingCode.NO_AUTH_TOKEN.finding(refused.finding().evidence());
        PreflightPair p = new PreflightPair(B0.id(), A0.id(), pulled(new PairResult(refused.direction(),
                refused.sourceNode(), refused.sourceGpu(), refused.targetNode(), refused.targetGpu(), refused.verdict(),
                refused.durationSeconds(), noToken, refused.stages(), null), Blame.TARGET));

        assertThat(PreflightVerdict.blamedId(p)).isEqualTo(A0.id());
    }

    /** A pair as a pull reports it: the finding about the call to the peer blamed on the side given (PullExchange). */
    private static PairResult pulled(PairResult r, Blame blame) {
        return new PairResult(Direction.PULL, r.sourceNode(), r.sourceGpu(), r.targetNode(), r.targetGpu(), r.verdict(),
                r.durationSeconds(), r.finding().withBlame(blame, null), r.stages(), r.debug());
    }

    @Test
    void fewerInstancesThanExpectedIsCouldNotTell() {
        PreflightReport r = PreflightVerdict.judge(3, A0.id(), map(A0, B0), List.of(), List.of(), 120.4);

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.result()).isEqualTo("unknown");
        assertThat(r.verdict().code()).isEqualTo("PREFLIGHT_PEERS_MISSING");
        assertThat(r.verdict().evidence()).containsEntry("found", 2).containsEntry("expected", 3)
                .containsEntry("deadlineSeconds", 120L);
        assertThat(r.verdict().cause()).contains("Only 2 of 3").contains("1 missing; found job-0:8080, job-2:8080");
    }

    @Test
    void passingPairsButAnInstanceWhoseResultsNeverCameIsCouldNotTell() {
        List<PreflightPair> mine = List.of(pair(A1, A0, null, 0), pair(B0, A0, null, 0));

        PreflightReport r = PreflightVerdict.judge(3, A0.id(), ALL, mine, List.of("job-2:8080"), 1.0);

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.missingResults()).containsExactly("job-2:8080");
    }

    @Test
    void theTableShowsEveryPairTheMatrixAndTheExitCode() {
        List<PreflightPair> pairs = allToAll((e, i) -> e.node().equals(i.node()) ? pair(e, i, Stage.IMPORT, 801)
                : pair(e, i, null, 0));
        PreflightReport r = PreflightVerdict.judge(3, A0.id(), ALL, pairs, List.of(), 3.21);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        PreflightTable.print(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);

        String text = bytes.toString(StandardCharsets.UTF_8);
        assertThat(text).startsWith("imexprobe preflight: FAIL - 3 of 3 instances, 6 pairs (exporter -> importer), 4 passed, 2 failed");
        assertThat(text).contains("FAIL  job-0:8080 GPU-a0 -> job-1:8080 GPU-a1 (same node)  import failed "
                + "CUDA_ERROR_NOT_SUPPORTED (801)  SAME_NODE_EXPORTER_GPU_HIDDEN, blame job-1:8080");
        assertThat(text).containsPattern("\\n  A +- +801 +ok\\n  B +801 +- +ok\\n  C +ok +ok +-\\n");
        assertThat(text).contains("verdict [error] SAME_NODE_EXPORTER_GPU_HIDDEN").contains("next: Next on node node-a")
                .endsWith("exit 1 (a pair failed) after 3.2 s" + System.lineSeparator());
    }

    /**
     * exporter → importer with nothing run: {@code refusing}'s GPU takes no context, for {@code why}; the finding
     * blames that GPU's side, as the exchange names it (ContextGuard.inPair).
     */
    static PreflightPair notProbed(Instance exporter, Instance importer, Instance refusing, FindingCode why) {
        String gpu = refusing.gpus().getFirst();
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("gpu", 0);
        evidence.put("uuid", gpu);
        Finding f = why.finding(evidence).withBlame(refusing == exporter ? Blame.SOURCE : Blame.TARGET, null);
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            stages.add(StageResult.skipped(s, "not run: " + why.name()));
        }
        return new PreflightPair(exporter.id(), importer.id(), new PairResult(Direction.PULL, exporter.node(),
                exporter.gpus().getFirst(), importer.node(), importer.gpus().getFirst(), Verdict.NOT_PROBED, 0.001, f,
                stages, null));
    }

    @Test
    void pairsNotProbedForAGpusComputeModeOrMigAreCouldNotTellBlamingThatInstance() {
        Random random = new Random();
        for (int round = 0; round < 50; round++) {
            Instance refusing = List.copyOf(ALL.values()).get(random.nextInt(ALL.size()));
            FindingCode why = random.nextBoolean() ? FindingCode.COMPUTE_MODE_EXCLUSIVE_PROCESS
                    : random.nextBoolean() ? FindingCode.COMPUTE_MODE_PROHIBITED : FindingCode.MIG_ENABLED;
            List<PreflightPair> pairs = allToAll((e, i) -> e == refusing || i == refusing
                    ? notProbed(e, i, refusing, why) : pair(e, i, null, 0));

            PreflightReport r = PreflightVerdict.judge(3, A0.id(), ALL, pairs, List.of(), 1.0);

            assertThat(r.exitCode()).as("%s on %s", why, refusing.name()).isEqualTo(2);
            assertThat(r.result()).isEqualTo("unknown");
            assertThat(r.verdict().code()).isEqualTo(why.name());
            assertThat(r.findings()).hasSize(1);
            assertThat(r.findings().getFirst().instance()).as("exporter and importer alike").isEqualTo(refusing.name());
            assertThat(r.findings().getFirst().pairs()).isEqualTo(4);
            assertThat(r.nextSteps()).containsExactly("Start with " + refusing.name() + " (node " + refusing.node()
                    + "): " + r.verdict().remedy(), "4 pair(s) were not probed, so the preflight cannot tell whether "
                    + "the job's imports work there; the other 2 passed");
        }
    }

    @Test
    void pairsNotProbedBecauseAGpuCannotMakeFabricMemoryFail() {
        for (FindingCode why : List.of(FindingCode.FABRIC_UNSUPPORTED, FindingCode.VMM_UNSUPPORTED)) {
            List<PreflightPair> pairs = allToAll((e, i) -> e == A1 || i == A1 ? notProbed(e, i, A1, why)
                    : pair(e, i, null, 0));

            PreflightReport r = PreflightVerdict.judge(3, B0.id(), ALL, pairs, List.of(), 1.0);

            assertThat(r.exitCode()).as("%s", why).isEqualTo(1);
            assertThat(r.verdict().code()).isEqualTo(why.name());
            assertThat(r.findings()).singleElement().satisfies(b -> {
                assertThat(b.instance()).isEqualTo("job-1:8080");
                assertThat(b.pairs()).isEqualTo(4);
            });
        }
    }

    @Test
    void aFailingPairDecidesTheVerdictBeforeLargerGroupsNotProbed() {
        // B0 is EXCLUSIVE_PROCESS without the opt-in (four pairs not probed); A0 -> A1 fails at import (one pair).
        List<PreflightPair> pairs = allToAll((e, i) -> e == B0 || i == B0
                ? notProbed(e, i, B0, FindingCode.COMPUTE_MODE_EXCLUSIVE_PROCESS)
                : e == A0 ? pair(e, i, Stage.IMPORT, 801) : pair(e, i, null, 0));

        PreflightReport r = PreflightVerdict.judge(3, A0.id(), ALL, pairs, List.of(), 2.0);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PreflightTable.print(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);
        String text = bytes.toString(StandardCharsets.UTF_8);

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.verdict().code()).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
        assertThat(r.findings()).extracting(b -> b.finding().code() + " " + b.instance() + " " + b.pairs())
                .containsExactly("SAME_NODE_EXPORTER_GPU_HIDDEN job-1:8080 1", "COMPUTE_MODE_EXCLUSIVE_PROCESS job-2:8080 4");
        assertThat(text).startsWith("imexprobe preflight: FAIL - 3 of 3 instances, 6 pairs (exporter -> importer), "
                + "1 passed, 1 failed, 4 not probed");
        assertThat(text).contains("NOT PROBED  job-2:8080 GPU-b0 -> job-0:8080 GPU-a0  COMPUTE_MODE_EXCLUSIVE_PROCESS, "
                + "blame job-2:8080");
        assertThat(text).containsPattern("\\n  A +- +801 +n/p\\n  B +ok +- +n/p\\n  C +n/p +n/p +-\\n");
    }

    @Test
    void optionsNeedExpectAndTakeSpringDurations() {
        assertThat(PreflightOptions.parse(new String[] {"--expect", "4"}))
                .isEqualTo(new PreflightOptions(4, java.time.Duration.ofSeconds(120), false));
        assertThat(PreflightOptions.parse(new String[] {"--expect", "2", "--deadline", "2m", "--json"}))
                .isEqualTo(new PreflightOptions(2, java.time.Duration.ofMinutes(2), true));
        assertThat(PreflightOptions.parse(new String[] {"--expect", "2", "--deadline", "90"}).deadline())
                .hasSeconds(90);
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--deadline", "2m"}))
                .hasMessageContaining("--expect N is required");
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--expect", "0"}))
                .hasMessage("--expect needs a positive whole number (at most 2147483647), got '0'");
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--expect", "two"}))
                .hasMessageContaining("whole number (at most 2147483647), got 'two'");
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--expect", "2", "--deadline", "soon"}))
                .hasMessageContaining("--deadline needs a positive duration such as 20s, 2m or 500ms, got 'soon'");
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--expect", "2", "--expect", "3"}))
                .hasMessage("--expect is given twice; give it once");
        assertThat(PreflightOptions.parse(new String[] {"--deadline=45s", "--expect=3"}))
                .isEqualTo(new PreflightOptions(3, java.time.Duration.ofSeconds(45), false));
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--expect", "2", "--deadline"}))
                .hasMessageContaining("--deadline needs a value");
        assertThatThrownBy(() -> PreflightOptions.parse(new String[] {"--expect", "2", "--fast"}))
                .hasMessageContaining("unknown option '--fast'");
    }
}
