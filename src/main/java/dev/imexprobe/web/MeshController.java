package dev.imexprobe.web;

import dev.imexprobe.api.Wire;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.mesh.MeshService;
import dev.imexprobe.mesh.MeshView;
import dev.imexprobe.mesh.PairState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeService;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.util.HtmlUtils;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * GET /v1/mesh: the pairs this agent took part in ({@code scope=domain}: every agent's, merged, with blame
 * judged across them). GET /: the same as an HTML matrix, server-rendered, rows sources and columns targets.
 */
@RestController
public class MeshController {

    private final MeshService mesh;
    private final NodeService node;

    public MeshController(MeshService mesh, NodeService node) {
        this.mesh = mesh;
        this.node = node;
    }

    @GetMapping(path = "/v1/mesh", produces = MediaType.APPLICATION_JSON_VALUE)
    public MeshView mesh(@RequestParam(defaultValue = "agent") String scope,
                         @RequestParam(defaultValue = "true") String across) {
        boolean withAcross = ProbeController.bool("across", across);
        return switch (scope.toLowerCase(Locale.ROOT)) {
            case "agent" -> mesh.local(withAcross);
            case "domain" -> mesh.domain(withAcross);
            default -> throw ApiException.invalid("scope must be agent or domain, got '" + Wire.truncate(scope) + "'");
        };
    }

    @GetMapping(path = "/", produces = MediaType.TEXT_HTML_VALUE)
    public String matrix() {
        return MatrixPage.render(mesh.domain(true), node.report());
    }

    /** The matrix page: one table, colour by state, details in each cell's title and below the table. */
    static final class MatrixPage {

        private MatrixPage() {
        }

        static String render(MeshView view, NodeReport self) {
            // One section per IMEX domain: pairs exist only within one. Pairs across domains (not probed by design,
            // or probed on demand) are counted per pair of domains below them.
            Map<String, List<PairState>> byDomain = new java.util.TreeMap<>();
            Map<String, Map<PairState.State, Integer>> across = new java.util.TreeMap<>();
            for (PairState p : view.pairs()) {
                String d = p.domain() == null ? UNKNOWN_DOMAIN : p.domain();
                if (p.acrossDomains()) {
                    across.computeIfAbsent(d + "\u0000" + p.targetDomain(), k -> new java.util.EnumMap<>(
                            PairState.State.class)).merge(p.state(), 1, Integer::sum);
                } else {
                    byDomain.computeIfAbsent(d, k -> new ArrayList<>()).add(p);
                }
            }
            long failed = view.pairs().stream().filter(p -> p.state() == PairState.State.FAILED).count();
            long ok = view.pairs().stream().filter(p -> p.state() == PairState.State.OK).count();
            long notProbed = view.pairs().stream().filter(p -> p.state() == PairState.State.NOT_PROBED).count();
            List<PairState> intermittent = view.pairs().stream().filter(MatrixPage::intermittent).toList();
            StringBuilder b = new StringBuilder(8192);
            b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                    .append("<meta http-equiv=\"refresh\" content=\"").append(Math.max(2, (int) view.intervalSeconds()))
                    .append("\"><title>imexprobe — fabric memory mesh</title><style>")
                    .append("body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}")
                    .append("table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;font-size:12px}")
                    .append("th{background:#f4f4f4;text-align:left;font-weight:600}")
                    .append("td.ok{background:#c8efc8}td.failed{background:#f6b9b4;font-weight:600}")
                    .append("td.ok.intermittent{background:#fbe2a0}")
                    .append("td.unknown{background:#e6e6e6;color:#777}td.none{background:#fff}")
                    .append("td.not_probed{background:#f4f4f4;color:#999;font-style:italic}")
                    .append(".sim{background:#fff3b0;border:1px solid #e0c000;padding:6px 10px;display:inline-block}")
                    .append(".f-error{color:#a00}.f-warning{color:#a60}.f-info{color:#555}code{font-size:12px}")
                    .append("</style></head><body>\n");
            b.append("<h1>imexprobe: fabric memory between GPUs</h1>\n");
            if (view.fake()) {
                b.append("<p class=\"sim\">SIMULATED: these agents run on the fake driver; nothing here was measured on a GPU.</p>\n");
            }
            b.append("<p>Seen from <b>").append(esc(view.agent().node())).append("</b> (agent ")
                    .append(esc(view.agent().id())).append(", version ").append(esc(view.agent().version()))
                    .append("). Agents merged: ").append(esc(String.join(", ", view.agents())));
            if (!view.unreachableAgents().isEmpty()) {
                b.append("; <span class=\"f-error\">not answering: ")
                        .append(esc(String.join(", ", view.unreachableAgents()))).append("</span>");
            }
            b.append(". Pairs: ").append(view.pairs().size()).append(" (").append(ok).append(" ok, ");
            if (!intermittent.isEmpty()) {
                b.append(intermittent.size()).append(" of them failing now and then, ");
            }
            b.append(failed)
                    .append(" failed, ").append(notProbed).append(" not probed by design). ")
                    .append("IMEX domains: ").append(byDomain.size())
                    .append(". Rows export (source), columns import (target). Refreshes every ")
                    .append((int) Math.max(2, view.intervalSeconds())).append(" s.</p>\n");
            channelMode(b, self);
            boolean first = true;
            for (Map.Entry<String, List<PairState>> e : byDomain.entrySet()) {
                domainSection(b, e.getKey(), e.getValue(), first);
                first = false;
            }
            if (!across.isEmpty()) {
                b.append("<h2>Across IMEX domains</h2>\n<p>FABRIC handles do not import across IMEX domains by design ")
                        .append("(<code>DIFFERENT_IMEX_DOMAIN</code>): the mesh does not probe these pairs, and they ")
                        .append("raise no alert. Pairs by exporter's and importer's domain (with more than ")
                        .append(dev.imexprobe.mesh.MeshService.ACROSS_FROM_PEERS_UP_TO)
                        .append(" peers, this agent's own: peers are not asked for theirs):</p>\n")
                        .append("<table id=\"across\"><tr><th>exporter's domain</th><th>importer's domain</th>")
                        .append("<th>pairs</th></tr>\n");
                across.forEach((k, counts) -> {
                    String[] d = k.split("\u0000", 2);
                    int notProbedHere = counts.getOrDefault(PairState.State.NOT_PROBED, 0);
                    StringBuilder text = new StringBuilder();
                    counts.forEach((st, n) -> text.append(text.isEmpty() ? "" : ", ").append(n).append(' ')
                            .append(st == PairState.State.NOT_PROBED ? "not probed — different domain"
                                    : st.label() + " (on demand)"));
                    b.append("<tr><td><code>").append(esc(d[0])).append("</code></td><td><code>").append(esc(d[1]))
                            .append("</code></td><td class=\"").append(notProbedHere == counts.values().stream()
                                    .mapToInt(Integer::intValue).sum() ? "not_probed" : "unknown")
                            .append("\">").append(esc(text.toString())).append("</td></tr>\n");
                });
                b.append("</table>\n");
            }
            List<Finding> meshFindings = view.findings();
            b.append("<h2>Mesh findings</h2>\n");
            findings(b, meshFindings);
            b.append("<h2>Failed pairs</h2>\n<ul>\n");
            for (PairState p : view.pairs()) {
                if (p.state() != PairState.State.FAILED) {
                    continue;
                }
                b.append("<li>").append(esc(label(p.sourceNode(), p.sourceGpu()))).append(" → ")
                        .append(esc(label(p.targetNode(), p.targetGpu()))).append(": stage <code>")
                        .append(esc(String.valueOf(p.stage()))).append("</code>");
                if (p.cuResultName() != null) {
                    b.append(", <code>").append(esc(p.cuResultName())).append(" (").append(p.cuResult()).append(")</code>");
                }
                if (p.finding() != null) {
                    b.append(", <b>").append(esc(p.finding().code())).append("</b> (blame ")
                            .append(esc(p.finding().blame().label())).append("): ").append(esc(p.finding().cause()))
                            .append(" <i>Remedy:</i> ").append(esc(p.finding().remedy()));
                }
                b.append("</li>\n");
            }
            b.append("</ul>\n");
            if (!intermittent.isEmpty()) {
                // Their last probe passed, so nothing here says which stage fails: the runbook's query does.
                b.append("<h2>Failing now and then</h2>\n<p>Pairs whose last probe passed but earlier ones failed ")
                        .append("(ImexprobePairImportIntermittent).</p>\n<ul id=\"intermittent\">\n");
                for (PairState p : intermittent) {
                    b.append("<li>").append(esc(label(p.sourceNode(), p.sourceGpu()))).append(" → ")
                            .append(esc(label(p.targetNode(), p.targetGpu()))).append(": ")
                            .append(esc(recent(p))).append("</li>\n");
                }
                b.append("</ul>\n");
            }
            if (notProbed > 0) {
                // Grey, never red: what the mesh leaves alone by design, with the reason, apart from failures.
                Map<String, Long> reasons = new java.util.TreeMap<>();
                view.pairs().stream().filter(p -> p.state() == PairState.State.NOT_PROBED).forEach(p -> reasons.merge(
                        p.finding() != null ? p.finding().code() : "none", 1L, Long::sum));
                b.append("<h2>Not probed (by design, never alerting)</h2>\n<ul id=\"not-probed\">\n");
                reasons.forEach((code, n) -> b.append("<li><b>").append(esc(code)).append("</b>: ").append(n)
                        .append(" pair(s)</li>\n"));
                b.append("</ul>\n");
            }
            b.append("<h2>This node</h2>\n");
            findings(b, self.findings());
            b.append("<p>JSON: <a href=\"/v1/mesh?scope=domain\">/v1/mesh?scope=domain</a>, ")
                    .append("<a href=\"/v1/node\">/v1/node</a>, <a href=\"/actuator/prometheus\">/actuator/prometheus</a></p>\n");
            b.append("</body></html>\n");
            return b.toString();
        }

        /**
         * This agent's channel mode: an observer has no channel by design (grey, nothing probed); hostPath or
         * computeDomain without a usable channel is broken (red, its pairs fail and alert).
         */
        private static void channelMode(StringBuilder b, NodeReport self) {
            if (self.channelMode() == null) {
                return;
            }
            b.append("<p id=\"channel-mode\" data-mode=\"").append(esc(self.channelMode())).append("\">Channel mode <b>")
                    .append(esc(self.channelMode())).append("</b>: ");
            if (self.observer()) {
                b.append("<span class=\"f-info\">observer: no IMEX channel by configuration, no context, no "
                        + "allocation; this agent probes nothing and no peer probes into it (not probed, never "
                        + "failed).</span>");
            } else if (self.usableChannels() == 0) {
                b.append("<span class=\"f-error\">no usable IMEX channel although this mode expects one: exports "
                        + "and imports here fail with 800 (NO_IMEX_CHANNEL below).</span>");
            } else {
                b.append(self.usableChannels()).append(" usable IMEX channel(s).");
            }
            b.append("</p>\n");
        }

        static final String UNKNOWN_DOMAIN = "unknown";

        /** One IMEX domain's matrix: its sources as rows, its targets as columns. */
        private static void domainSection(StringBuilder b, String domain, List<PairState> pairs, boolean first) {
            Set<String> sources = new LinkedHashSet<>();
            Set<String> targets = new LinkedHashSet<>();
            Map<String, PairState> cells = new LinkedHashMap<>();
            for (PairState p : pairs) {
                String s = label(p.sourceNode(), p.sourceGpu());
                String t = label(p.targetNode(), p.targetGpu());
                sources.add(s);
                targets.add(t);
                cells.put(s + "\u0000" + t, p);
            }
            List<String> rows = new ArrayList<>(sources);
            List<String> cols = new ArrayList<>(targets);
            rows.sort(null);
            cols.sort(null);
            long failed = pairs.stream().filter(p -> p.state() == PairState.State.FAILED).count();
            long ok = pairs.stream().filter(p -> p.state() == PairState.State.OK).count();
            b.append("<h2 class=\"domain\">IMEX domain <code>").append(esc(domain)).append("</code></h2>\n<p>")
                    .append(pairs.size()).append(" pairs (").append(ok).append(" ok, ").append(failed)
                    .append(" failed).</p>\n");
            b.append("<table").append(first ? " id=\"matrix\"" : "").append(" class=\"matrix\" data-domain=\"")
                    .append(esc(domain)).append("\"><tr><th>source \\ target</th>");
            for (String c : cols) {
                b.append("<th>").append(esc(c)).append("</th>");
            }
            b.append("</tr>\n");
            for (String r : rows) {
                b.append("<tr><th>").append(esc(r)).append("</th>");
                for (String c : cols) {
                    PairState p = cells.get(r + "\u0000" + c);
                    if (p == null) {
                        b.append("<td class=\"none\"></td>");
                        continue;
                    }
                    String state = p.state().label() + (intermittent(p) ? " intermittent" : "");
                    b.append("<td class=\"").append(state).append("\" data-source=\"").append(esc(r))
                            .append("\" data-target=\"").append(esc(c)).append("\" title=\"").append(esc(title(p)))
                            .append("\">").append(esc(cellText(p))).append("</td>");
                }
                b.append("</tr>\n");
            }
            b.append("</table>\n");
        }

        private static void findings(StringBuilder b, List<Finding> findings) {
            if (findings.isEmpty()) {
                b.append("<p>none</p>\n");
                return;
            }
            b.append("<ul>\n");
            for (Finding f : findings) {
                b.append("<li class=\"f-").append(f.severity().label()).append("\"><b>").append(esc(f.code()))
                        .append("</b> [").append(f.severity().label()).append(", blame ").append(f.blame().label())
                        .append("]: ").append(esc(f.cause())).append(" <i>Remedy:</i> ").append(esc(f.remedy()))
                        .append("</li>\n");
            }
            b.append("</ul>\n");
        }

        static String label(String node, String gpu) {
            String g = gpu == null ? "?" : GpuDevice.shortUuid(gpu);
            return node + " / " + g;
        }

        /** Last result ok, but some of the recent ones failed: green alone would hide it. */
        static boolean intermittent(PairState p) {
            return p.state() == PairState.State.OK && p.recentProbes() != null && p.recentFailures() != null
                    && p.recentFailures() > 0;
        }

        private static String recent(PairState p) {
            return p.recentFailures() + " of the last " + p.recentProbes() + " probes failed";
        }

        private static String cellText(PairState p) {
            String text = cellState(p);
            // A failed pair that also passed lately says so too; one failing throughout needs no count.
            boolean count = intermittent(p) || p.state() == PairState.State.FAILED && p.recentProbes() != null
                    && p.recentFailures() != null && p.recentFailures() < p.recentProbes();
            return count ? text + " · " + p.recentFailures() + "/" + p.recentProbes() + " failed" : text;
        }

        private static String cellState(PairState p) {
            return switch (p.state()) {
                case OK -> "ok";
                case UNKNOWN -> "…";
                // the reason where it is the GPU's (compute mode, MIG, no fabric memory), not the domain the section
                // already says
                case NOT_PROBED -> p.finding() != null && !p.finding().is(dev.imexprobe.finding.FindingCode.DIFFERENT_IMEX_DOMAIN)
                        ? "not probed " + p.finding().code() : "not probed";
                case FAILED -> (p.cuResult() != null ? p.cuResult() + " " : "")
                        + (p.finding() != null ? p.finding().code() : p.stage());
            };
        }

        private static String title(PairState p) {
            StringBuilder t = new StringBuilder();
            t.append(p.state().label());
            if (p.stage() != null) {
                t.append(" at ").append(p.stage());
            }
            if (p.cuResultName() != null) {
                t.append(": ").append(p.cuResultName()).append(" (").append(p.cuResult()).append(")");
            }
            if (p.finding() != null) {
                t.append("\n").append(p.finding().code()).append(": ").append(p.finding().cause());
            }
            if (p.recentProbes() != null && p.recentFailures() != null) {
                t.append("\n").append(recent(p));
            }
            if (p.ageSeconds() != null) {
                t.append("\nlast probe ").append(Math.round(p.ageSeconds())).append(" s ago");
            }
            if (p.lastSuccess() != null) {
                t.append(", last success ").append(p.lastSuccess());
            }
            return t.toString();
        }

        /** Spring's HTML escaping of the five special characters (the page is UTF-8); null as nothing. */
        static String esc(String s) {
            return s == null ? "" : HtmlUtils.htmlEscape(s, "UTF-8");
        }
    }
}
