package dev.imexprobe.web;

import dev.imexprobe.mesh.MeshView;
import dev.imexprobe.mesh.PairState;
import dev.imexprobe.mesh.PairState.State;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.testing.NodeReports;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.imexprobe.web.MeshController.MatrixPage.esc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The matrix page marks a pair whose last probe passed but some of its recent ones failed
 * (ImexprobePairImportIntermittent): its own cell class and text, the counts in the title, a list of them.
 */
class MatrixPageTest {

    private static final String DOMAIN = "fabric:6a1c7b2e/7";
    private static final String GPU_A = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
    private static final String GPU_B = "GPU-bbbbbbbb-1111-2222-3333-444444444444";
    private static final String GPU_C = "GPU-cccccccc-1111-2222-3333-444444444444";
    /** A node name a peer could send: it reaches the page only escaped. */
    private static final String ODD = "rack<1>&\"b\"";
    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");
    private static final NodeReport SELF = NodeReports.report(List.of(), 1, ImexDaemonState.NOT_INSTALLED);

    @Test
    void pairsThatFailNowAndThenAreMarkedCountedAndListed() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int p1 = 2 + random.nextInt(PairState.RECENT - 1);
        int f1 = 1 + random.nextInt(p1 - 1);
        int p2 = 2 + random.nextInt(PairState.RECENT - 1);
        int f2 = 1 + random.nextInt(p2 - 1);
        int p3 = 1 + random.nextInt(PairState.RECENT);
        int p4 = 2 + random.nextInt(PairState.RECENT - 1);
        int f4 = 1 + random.nextInt(p4 - 1);
        int p5 = 1 + random.nextInt(PairState.RECENT);
        List<PairState> pairs = List.of(
                pair("node-a", GPU_A, "node-b", GPU_B, State.OK, p1, f1),
                pair(ODD, GPU_C, "node-a", GPU_A, State.OK, p2, f2),
                pair("node-b", GPU_B, "node-a", GPU_A, State.OK, p3, 0),
                failed("node-a", GPU_A, "node-c", GPU_C, p4, f4),
                failed("node-c", GPU_C, "node-b", GPU_B, p5, p5),
                pair("node-b", GPU_B, "node-c", GPU_C, State.OK, null, null),
                PairState.unknown(new dev.imexprobe.mesh.PairKey("node-c", GPU_C, "node-a", GPU_A)));
        String html = MeshController.MatrixPage.render(view(pairs), SELF);
        String why = "seed " + seed + "\n" + html;

        Cell c1 = cell(html, "node-a / GPU-aaaaaaaa", "node-b / GPU-bbbbbbbb");
        assertThat(c1.cls()).as(why).isEqualTo("ok intermittent");
        assertThat(c1.text()).as(why).isEqualTo("ok · " + f1 + "/" + p1 + " failed");
        assertThat(c1.title()).as(why).contains(f1 + " of the last " + p1 + " probes failed");

        Cell c2 = cell(html, esc(ODD) + " / GPU-cccccccc", "node-a / GPU-aaaaaaaa");
        assertThat(c2.cls()).as(why).isEqualTo("ok intermittent");
        assertThat(c2.text()).as(why).isEqualTo("ok · " + f2 + "/" + p2 + " failed");

        Cell steady = cell(html, "node-b / GPU-bbbbbbbb", "node-a / GPU-aaaaaaaa");
        assertThat(steady.cls()).as(why).isEqualTo("ok");
        assertThat(steady.text()).as(why).isEqualTo("ok");
        assertThat(steady.title()).as(why).contains("0 of the last " + p3 + " probes failed");

        Cell flapping = cell(html, "node-a / GPU-aaaaaaaa", "node-c / GPU-cccccccc");
        assertThat(flapping.cls()).as(why).isEqualTo("failed");
        assertThat(flapping.text()).as(why).isEqualTo("800 import · " + f4 + "/" + p4 + " failed");
        assertThat(flapping.title()).as(why).contains(f4 + " of the last " + p4 + " probes failed");

        Cell down = cell(html, "node-c / GPU-cccccccc", "node-b / GPU-bbbbbbbb");
        assertThat(down.cls()).as(why).isEqualTo("failed");
        assertThat(down.text()).as("failing throughout: no count; " + why).isEqualTo("800 import");
        assertThat(down.title()).as(why).contains(p5 + " of the last " + p5 + " probes failed");

        Cell noHistory = cell(html, "node-b / GPU-bbbbbbbb", "node-c / GPU-cccccccc");
        assertThat(noHistory.cls()).as(why).isEqualTo("ok");
        assertThat(noHistory.text()).as(why).isEqualTo("ok");
        assertThat(noHistory.title()).as(why).doesNotContain("probes failed");
        Cell unknown = cell(html, "node-c / GPU-cccccccc", "node-a / GPU-aaaaaaaa");
        assertThat(unknown.cls()).as(why).isEqualTo("unknown");
        assertThat(unknown.title()).as(why).doesNotContain("probes failed");

        assertThat(html).as(why).contains("Pairs: 7 (4 ok, 2 of them failing now and then, 2 failed, 0 not probed");
        assertThat(html.indexOf("<h2>Failing now and then</h2>")).as(why)
                .isGreaterThan(html.indexOf("<h2>Failed pairs</h2>"));
        assertThat(section(html, "<ul id=\"intermittent\">\n", "</ul>")).as(why).isEqualTo(
                "<li>node-a / GPU-aaaaaaaa → node-b / GPU-bbbbbbbb: " + f1 + " of the last " + p1
                        + " probes failed</li>\n"
                        + "<li>" + esc(ODD) + " / GPU-cccccccc → node-a / GPU-aaaaaaaa: " + f2 + " of the last "
                        + p2 + " probes failed</li>\n");
        assertThat(html).as(why).doesNotContain(ODD);
    }

    @Test
    void withoutRecentFailuresOfOkPairsNothingIsMarked() {
        Random random = new Random();
        int probes = 1 + random.nextInt(PairState.RECENT);
        String html = MeshController.MatrixPage.render(view(List.of(
                pair("node-a", GPU_A, "node-b", GPU_B, State.OK, probes, 0),
                failed("node-b", GPU_B, "node-a", GPU_A, probes, probes))), SELF);

        Cell ok = cell(html, "node-a / GPU-aaaaaaaa", "node-b / GPU-bbbbbbbb");
        assertThat(ok.cls()).isEqualTo("ok");
        assertThat(ok.text()).isEqualTo("ok");
        assertThat(ok.title()).contains("0 of the last " + probes + " probes failed");
        assertThat(cell(html, "node-b / GPU-bbbbbbbb", "node-a / GPU-aaaaaaaa").cls()).isEqualTo("failed");
        assertThat(html).contains("<td class=\"ok\" data-source=\"node-a / GPU-aaaaaaaa\"")
                .contains("Pairs: 2 (1 ok, 1 failed, 0 not probed").doesNotContain("ok intermittent").doesNotContain("id=\"intermittent\"")
                .doesNotContain("Failing now and then").doesNotContain("failing now and then");
    }

    private record Cell(String cls, String title, String text) {
    }

    /** The one cell of a pair: its class, title and text as the page writes them (escaped). */
    private static Cell cell(String html, String source, String target) {
        Matcher m = Pattern.compile("<td class=\"([^\"]*)\" data-source=\"" + Pattern.quote(source)
                + "\" data-target=\"" + Pattern.quote(target) + "\" title=\"([^\"]*)\">([^<]*)</td>").matcher(html);
        assertThat(m.find()).as("cell %s → %s in\n%s", source, target, html).isTrue();
        Cell c = new Cell(m.group(1), m.group(2), m.group(3));
        assertThat(m.find()).as("one cell %s → %s", source, target).isFalse();
        return c;
    }

    private static String section(String html, String start, String end) {
        int from = html.indexOf(start);
        assertThat(from).as("%s in\n%s", start, html).isNotNegative();
        from += start.length();
        return html.substring(from, html.indexOf(end, from));
    }

    private static MeshView view(List<PairState> pairs) {
        return new MeshView(new AgentIdentity("agent-1", "node-a", "1.2.3"), false, "domain", NOW, 30, NOW,
                List.of("agent-1"), List.of(), pairs, List.of());
    }

    private static PairState pair(String sourceNode, String sourceGpu, String targetNode, String targetGpu,
                                  State state, Integer recentProbes, Integer recentFailures) {
        return new PairState(sourceNode, sourceGpu, targetNode, targetGpu, DOMAIN, null, state, null, null, null, null,
                3.0, NOW.minusSeconds(3), NOW.minusSeconds(3), 0.02, 0, recentProbes, recentFailures);
    }

    private static PairState failed(String sourceNode, String sourceGpu, String targetNode, String targetGpu,
                                    int recentProbes, int recentFailures) {
        return new PairState(sourceNode, sourceGpu, targetNode, targetGpu, DOMAIN, null, State.FAILED, "import", 800,
                "CUDA_ERROR_NOT_PERMITTED", null, 3.0, NOW.minusSeconds(60), NOW.minusSeconds(3), 0.02, 1,
                recentProbes, recentFailures);
    }
}
