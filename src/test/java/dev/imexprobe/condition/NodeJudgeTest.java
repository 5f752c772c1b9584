package dev.imexprobe.condition;

import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.mesh.PairState;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class NodeJudgeTest {

    final NodeJudge judge = new NodeJudge("node-a", 2);

    static PairState ok(String source, String target) {
        return new PairState(source, "GPU-0", target, "GPU-0", PairState.State.OK, null, null, null, null, 0.0,
                Instant.EPOCH, Instant.EPOCH, 0.01, 0);
    }

    static PairState failed(String source, String target, FindingCode code, String stage, int cu, int rounds) {
        return new PairState(source, "GPU-0", target, "GPU-0", PairState.State.FAILED, stage, cu, "X",
                code.finding(Map.of()), 0.0, null, Instant.EPOCH, 0.01, rounds);
    }

    @Test
    void trueWhilePairsPass() {
        NodeJudge.Verdict v = judge.judge(List.of(ok("node-a", "node-b"), ok("node-a", "node-c")), false);
        assertThat(v.status()).isEqualTo(NodeJudge.Status.TRUE);
        assertThat(v.reason()).isEqualTo("ImportsPass");
        assertThat(v.message()).contains("(2 pair(s) probed)");
    }

    @Test
    void aPairFailingOneRoundDoesNotChangeTheTrueMessage() {
        NodeJudge.Verdict healthy = judge.judge(List.of(ok("node-a", "node-b"), ok("node-a", "node-c")), false);
        NodeJudge.Verdict blip = judge.judge(List.of(ok("node-a", "node-b"),
                failed("node-a", "node-c", FindingCode.CREATE_NOT_PERMITTED, "create", 800, 1)), false);
        assertThat(blip).isEqualTo(healthy);
    }

    @Test
    void oneFailedRoundChangesNothingTwoMakeItFalseWithTheFindingInCamelCase() {
        List<PairState> once = List.of(failed("node-a", "node-b", FindingCode.CREATE_NOT_PERMITTED, "create", 800, 1),
                ok("node-a", "node-c"));
        assertThat(judge.judge(once, false).status()).isEqualTo(NodeJudge.Status.TRUE);

        List<PairState> twice = List.of(failed("node-a", "node-b", FindingCode.CREATE_NOT_PERMITTED, "create", 800, 2),
                ok("node-a", "node-c"));
        NodeJudge.Verdict v = judge.judge(twice, false);
        assertThat(v.status()).isEqualTo(NodeJudge.Status.FALSE);
        assertThat(v.reason()).isEqualTo("CreateNotPermitted");
        assertThat(v.message()).contains("node-a/GPU-0 → node-b/GPU-0 (create 800)", "CREATE_NOT_PERMITTED",
                "Remedy: ");
    }

    @Test
    void aPeerThatCannotImportIsThePeersProblem() {
        List<PairState> pairs = List.of(failed("node-a", "node-b", FindingCode.IMPORT_NOT_PERMITTED, "import", 800, 5),
                ok("node-a", "node-c"));
        NodeJudge.Verdict v = judge.judge(pairs, false);
        assertThat(v.status()).isEqualTo(NodeJudge.Status.TRUE);
        assertThat(v.message()).contains("1 failing pair(s) blame their peer: node-a/GPU-0 → node-b/GPU-0");
        // The same failure seen on the importer's side blames that node.
        assertThat(new NodeJudge("node-b", 2).judge(pairs, false).reason()).isEqualTo("ImportNotPermitted");
    }

    @Test
    void exportsFailingIntoEveryOtherNodeBlameThisNode() {
        List<PairState> pairs = List.of(failed("node-a", "node-b", FindingCode.MAP_FAILED, "map", 1, 3),
                failed("node-a", "node-c", FindingCode.MAP_FAILED, "map", 1, 3));
        NodeJudge.Verdict v = judge.judge(pairs, false);
        assertThat(v.status()).isEqualTo(NodeJudge.Status.FALSE);
        assertThat(v.reason()).isEqualTo("MapFailed");
        assertThat(v.message()).startsWith("2 of 2 pair(s)");
    }

    @Test
    void peersDownOnlyAmongNodesOfOtherDomainsDoNotBlameThisNode() {
        // An HGX cluster: every node its own domain. Two peers never answered (their pairs under their addresses,
        // failed); the peers that answered are in other domains, their pairs not probed.
        List<PairState> pairs = List.of(
                failed("node-a", "10.0.0.7:8080", FindingCode.PEER_UNREACHABLE, "transfer", 0, 9),
                failed("node-a", "10.0.0.8:8080", FindingCode.PEER_UNREACHABLE, "transfer", 0, 9),
                notProbed("node-a", "node-b", FindingCode.DIFFERENT_IMEX_DOMAIN),
                notProbed("node-a", "node-c", FindingCode.DIFFERENT_IMEX_DOMAIN));
        NodeJudge.Verdict v = judge.judge(pairs, false);
        assertThat(v.status()).as("%s", v).isNotEqualTo(NodeJudge.Status.FALSE);
        // With no node reached at all, this node is the common part.
        NodeJudge.Verdict alone = judge.judge(pairs.subList(0, 2), false);
        assertThat(alone.status()).isEqualTo(NodeJudge.Status.FALSE);
        assertThat(alone.reason()).isEqualTo("PeerUnreachable");
    }

    @Test
    void unknownWhenNothingWasProbedOrInObserverModeOrNotYetJudged() {
        assertThat(judge.judge(List.of(), false).reason()).isEqualTo("NothingProbed");
        assertThat(judge.judge(List.of(ok("node-x", "node-y")), false).status()).as("pairs of other nodes only")
                .isEqualTo(NodeJudge.Status.UNKNOWN);
        assertThat(judge.judge(List.of(ok("node-a", "node-b")), true).reason()).isEqualTo("ObserverMode");
        NodeJudge.Verdict settling = judge.judge(
                List.of(failed("node-a", "node-b", FindingCode.CREATE_NOT_PERMITTED, "create", 800, 1)), false);
        assertThat(settling.status()).isEqualTo(NodeJudge.Status.UNKNOWN);
        assertThat(settling.reason()).isEqualTo("NotYetJudged");
        NodeJudge.Verdict noChannel = judge.judge(
                List.of(failed("node-a", "node-b", FindingCode.CREATE_NOT_PERMITTED, "create", 800, 5)), false, true);
        assertThat(noChannel.status()).as("no channel by configuration is not a fault").isEqualTo(NodeJudge.Status.UNKNOWN);
        assertThat(noChannel.reason()).isEqualTo("NoChannelConfigured");
    }

    @Test
    void reasonsAreCamelCaseAndMessagesBounded() {
        assertThat(NodeJudge.camelCase("NO_IMEX_CHANNEL")).isEqualTo("NoImexChannel");
        assertThat(NodeJudge.camelCase("SAME_NODE_EXPORTER_GPU_HIDDEN")).isEqualTo("SameNodeExporterGpuHidden");
        List<PairState> many = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++) {
            many.add(failed("node-a", "node-" + i, FindingCode.CREATE_NOT_PERMITTED, "create", 800, 2));
        }
        NodeJudge.Verdict v = judge.judge(many, false);
        assertThat(v.message()).hasSizeLessThanOrEqualTo(NodeJudge.MAX_MESSAGE).contains("and 196 more");
    }

    static PairState notProbed(String source, String target, FindingCode why) {
        return new PairState(source, "GPU-0", target, "GPU-0", PairState.State.NOT_PROBED, null, null, null,
                why.finding(Map.of("gpu", 0, "uuid", "GPU-0")), 0.0, null, Instant.EPOCH, null, 0);
    }

    @Test
    void gpusTheAgentStaysOffForComputeModeOrMigNeverMakeTheNodeBroken() {
        for (FindingCode why : List.of(FindingCode.COMPUTE_MODE_EXCLUSIVE_PROCESS, FindingCode.COMPUTE_MODE_PROHIBITED,
                FindingCode.MIG_ENABLED)) {
            List<PairState> allOff = List.of(notProbed("node-a", "node-b", why), notProbed("node-b", "node-a", why),
                    notProbed("node-a", "node-c", why));
            NodeJudge.Verdict v = judge.judge(allOff, false);
            assertThat(v.status()).as(why.name()).isNotEqualTo(NodeJudge.Status.FALSE);
            List<PairState> mixed = List.of(ok("node-a", "node-b"), notProbed("node-a", "node-c", why));
            NodeJudge.Verdict m = judge.judge(mixed, false);
            assertThat(m.status()).as(why.name()).isEqualTo(NodeJudge.Status.TRUE);
            assertThat(m.message()).contains("(1 pair(s) probed)");
        }
    }
}
