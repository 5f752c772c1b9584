package dev.imexprobe.mesh;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.ImexDomain;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the pairs say about IMEX domains themselves, beside the per-endpoint blame of {@link MeshDiagnosis}. Within
 * one NVLink domain (one {@code fabric:<cluster>/<clique>}) every node should import from every other; the nodes
 * that do form groups (pairs that passed join them). Failures between groups that look like "not one IMEX domain"
 * (import 801/400, access 801: the handle cannot be resolved there, not a missing channel) mean:
 * <ul>
 *   <li>two or more groups of several nodes: the clique is split into several IMEX domains
 *       ({@code CLIQUE_SPLIT}, DRA driver issue #892: two ComputeDomains in one clique);</li>
 *   <li>a node alone, failing so with at least two others that work among themselves: it claims a domain its
 *       peers cannot import from ({@code DOMAIN_CLAIM_UNPROVEN}).</li>
 * </ul>
 * A cross-domain sample that passed ({@code IMEX_DOMAINS_NOT_ISOLATED}, {@code DOMAIN_MEMBERS_DISAGREE}) is lifted
 * from its pair into the view's findings.
 */
public final class DomainDiagnosis {

    private DomainDiagnosis() {
    }

    /** Import that the driver cannot resolve (801 NOT_SUPPORTED, 400 INVALID_HANDLE) or access it refuses (801). */
    static boolean looksLikeAnotherDomain(PairState p) {
        if (p.state() != PairState.State.FAILED || p.cuResult() == null || p.stage() == null) {
            return false;
        }
        return switch (p.stage()) {
            case "import" -> p.cuResult() == 801 || p.cuResult() == 400;
            case "access" -> p.cuResult() == 801;
            default -> false;
        };
    }

    public static List<Finding> diagnose(List<PairState> pairs) {
        List<Finding> out = new ArrayList<>();
        Map<String, List<PairState>> byDomain = new TreeMap<>();
        for (PairState p : pairs) {
            if (ImexDomain.isFabric(p.domain()) && !p.acrossDomains()
                    && !p.sourceNode().equals(p.targetNode())
                    && (p.state() == PairState.State.OK || p.state() == PairState.State.FAILED)) {
                byDomain.computeIfAbsent(p.domain(), d -> new ArrayList<>()).add(p);
            }
        }
        byDomain.forEach((domain, ps) -> domain(domain, ps, out));
        for (PairState p : pairs) {
            if (p.finding() != null && (p.finding().is(FindingCode.IMEX_DOMAINS_NOT_ISOLATED)
                    || p.finding().is(FindingCode.DOMAIN_MEMBERS_DISAGREE))) {
                out.add(p.finding());
            }
        }
        return List.copyOf(out);
    }

    private static void domain(String domain, List<PairState> pairs, List<Finding> out) {
        Map<String, String> parent = new TreeMap<>();
        for (PairState p : pairs) {
            parent.putIfAbsent(p.sourceNode(), p.sourceNode());
            parent.putIfAbsent(p.targetNode(), p.targetNode());
        }
        for (PairState p : pairs) {
            if (p.state() == PairState.State.OK) {
                parent.put(root(parent, p.sourceNode()), root(parent, p.targetNode()));
            }
        }
        Map<String, Set<String>> groups = new TreeMap<>();
        parent.keySet().forEach(n -> groups.computeIfAbsent(root(parent, n), r -> new TreeSet<>()).add(n));
        List<PairState> between = pairs.stream().filter(DomainDiagnosis::looksLikeAnotherDomain)
                .filter(p -> !root(parent, p.sourceNode()).equals(root(parent, p.targetNode()))).toList();
        if (between.isEmpty()) {
            return;
        }
        List<Set<String>> large = groups.values().stream().filter(g -> g.size() >= 2).toList();
        if (large.size() >= 2) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("domain", domain);
            e.put("groups", large.stream().map(g -> String.join(", ", g)).map(g -> "[" + g + "]").toList());
            e.put("failedPairs", between.size());
            e.put("driverResult", mostCommon(between));
            out.add(FindingCode.CLIQUE_SPLIT.finding(e));
        }
        if (large.isEmpty()) {
            return; // no one here is proven to work with anyone: nothing to hold a lone node against
        }
        for (Set<String> g : groups.values()) {
            if (g.size() != 1) {
                continue;
            }
            String node = g.iterator().next();
            Set<String> witnesses = new TreeSet<>();
            List<PairState> mine = new ArrayList<>();
            for (PairState p : between) {
                if (p.sourceNode().equals(node) || p.targetNode().equals(node)) {
                    witnesses.add(p.sourceNode().equals(node) ? p.targetNode() : p.sourceNode());
                    mine.add(p);
                }
            }
            if (witnesses.size() >= 2) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("node", node);
                e.put("domain", domain);
                e.put("failedWith", List.copyOf(witnesses));
                e.put("driverResult", mostCommon(mine));
                out.add(FindingCode.DOMAIN_CLAIM_UNPROVEN.finding(e));
            }
        }
    }

    private static String root(Map<String, String> parent, String n) {
        String r = n;
        while (!parent.get(r).equals(r)) {
            r = parent.get(r);
        }
        return r;
    }

    private static String mostCommon(List<PairState> ps) {
        Map<String, Integer> counts = new TreeMap<>();
        for (PairState p : ps) {
            counts.merge(p.stage() + " " + p.cuResultName(), 1, Integer::sum);
        }
        return counts.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(null);
    }
}
