package dev.imexprobe.preflight;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Verdict;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Sums a preflight up: the exit code, the verdict, each failing or unprobed pair's finding against the instance it
 * blames, and the next step. Pure: the same pairs give the same answer on every instance.
 */
public final class PreflightVerdict {

    private PreflightVerdict() {
    }

    public static PreflightReport judge(int expected, String selfId, Map<String, Instance> instances,
                                        List<PreflightPair> pairs, List<String> missingResults, double seconds) {
        List<Instance> list = orderedInstances(selfId, instances);
        if (instances.size() < expected) {
            Map<String, Object> evidence = new LinkedHashMap<>();
            evidence.put("found", instances.size());
            evidence.put("expected", expected);
            evidence.put("deadlineSeconds", Math.round(seconds));
            evidence.put("missing", (expected - instances.size()) + " missing; found "
                    + String.join(", ", list.stream().map(Instance::name).toList()));
            return new PreflightReport("unknown", PreflightReport.UNKNOWN, expected, list, List.of(),
                    FindingCode.PREFLIGHT_PEERS_MISSING.finding(evidence), List.of(), List.of(), List.of(), seconds);
        }
        List<PreflightPair> sorted = pairs.stream().sorted(Comparator.comparing((PreflightPair p) -> name(instances, p.exporter()))
                .thenComparing(p -> name(instances, p.importer()))
                .thenComparing(p -> String.valueOf(p.result().sourceGpu()))
                .thenComparing(p -> String.valueOf(p.result().targetGpu()))).toList();
        List<PreflightPair> failed = sorted.stream().filter(PreflightVerdict::failed).toList();
        List<PreflightPair> unprobed = sorted.stream().filter(p -> !p.passed() && !failed(p)).toList();
        if (failed.isEmpty() && unprobed.isEmpty()) {
            boolean complete = missingResults.isEmpty();
            return new PreflightReport(complete ? "pass" : "unknown",
                    complete ? PreflightReport.PASS : PreflightReport.UNKNOWN, expected, list, sorted, null,
                    List.of(), complete ? List.of() : List.of(missing(missingResults)), missingResults, seconds);
        }
        List<PreflightReport.Blamed> blamed = new ArrayList<>(blame(instances, failed));
        blamed.addAll(blame(instances, unprobed));
        Finding verdict;
        List<String> next = new ArrayList<>();
        if (failed.isEmpty()) {
            // Nothing failed, but a GPU took no context (compute mode, MIG): whether the job's imports work there
            // is not known, which is exit 2, not a failure.
            verdict = blamed.getFirst().finding();
            next.add(startWith(blamed.getFirst()));
            next.add(unprobed.size() + " pair(s) were not probed, so the preflight cannot tell whether the job's "
                    + "imports work there" + (sorted.size() > unprobed.size() ? "; the other "
                    + (sorted.size() - unprobed.size()) + " passed" : ""));
            if (!missingResults.isEmpty()) {
                next.add(missing(missingResults));
            }
            return new PreflightReport("unknown", PreflightReport.UNKNOWN, expected, list, sorted, verdict, blamed,
                    next, missingResults, seconds);
        }
        if (failed.stream().allMatch(p -> p.result().finding() != null
                && p.result().finding().is(FindingCode.SAME_NODE_EXPORTER_GPU_HIDDEN))) {
            // The seed's pattern: same-node pairs fail (the exporter's GPU hidden), whatever crosses nodes passes.
            verdict = failed.getFirst().result().finding();
            long crossPassed = sorted.stream().filter(p -> p.passed() && !sameNode(p)).count();
            Set<String> nodes = new LinkedHashSet<>();
            failed.forEach(p -> nodes.add(p.result().targetNode()));
            for (String node : nodes) {
                next.add(ladderStep(node));
            }
            next.add(crossPassed > 0 ? crossPassed + " cross-node pair(s) passed: the channel and the fabric work; "
                    + "only pods of one node cannot import each other's handles. The configurations to try, in "
                    + "order: docs/same-node.md"
                    : "No cross-node pair ran to compare with. The configurations to try, in order: docs/same-node.md");
        } else {
            verdict = blamed.getFirst().finding();
            next.add(startWith(blamed.getFirst()));
        }
        return new PreflightReport("fail", PreflightReport.FAIL, expected, list, sorted, verdict, blamed,
                next, missingResults, seconds);
    }

    /**
     * Whether a pair counts as failed: it ran and failed, or it was not probed because a GPU of it cannot make fabric
     * memory at all (an error finding: the job's imports there cannot work either). A pair not probed for a GPU's
     * compute mode or MIG is neither passed nor failed: the preflight could not tell.
     */
    static boolean failed(PreflightPair p) {
        PairResult r = p.result();
        return r.verdict() == Verdict.FAIL || r.verdict() == Verdict.NOT_PROBED
                && r.finding() != null && r.finding().severity() == Severity.ERROR;
    }

    /** The first step: the instance the largest group blames, and its finding's remedy. */
    private static String startWith(PreflightReport.Blamed first) {
        return "Start with " + first.instance() + " (node " + first.node() + "): " + first.finding().remedy();
    }

    private static String missing(List<String> missingResults) {
        return "the pairs of " + String.join(", ", missingResults)
                + " never arrived: look at their own output (kubectl logs <pod> -c preflight)";
    }

    /** The ladder on the node where same-node imports fail: the one step that tells which isolation breaks them. */
    static String ladderStep(String node) {
        return "Next on node " + node + ": run the isolation ladder there, as root or in a privileged pod with the "
                + "host's /dev (`java -jar imexprobe.jar ladder`, or POST /v1/ladder to the imexprobe agent of that "
                + "node). A first FABRIC failure at rung 3 (LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE) or 4 "
                + "(..._DEVICE_NODE) confirms the driver resolves the handle through the exporter's GPU "
                + "(docs/ladder.md).";
    }

    /** Groups the failing pairs by (finding, blamed instance), the largest group first. */
    static List<PreflightReport.Blamed> blame(Map<String, Instance> instances, List<PreflightPair> failed) {
        Map<String, List<PreflightPair>> groups = new LinkedHashMap<>();
        for (PreflightPair p : failed) {
            groups.computeIfAbsent(code(p) + "\u0000" + blamedId(p), k -> new ArrayList<>()).add(p);
        }
        List<PreflightReport.Blamed> out = new ArrayList<>();
        for (List<PreflightPair> g : groups.values()) {
            PreflightPair first = g.getFirst();
            String id = blamedId(first);
            Instance who = instances.get(id);
            out.add(new PreflightReport.Blamed(who != null ? who.name() : id,
                    who != null ? who.node() : null, g.size(),
                    g.stream().limit(3).map(p -> name(instances, p.exporter()) + " -> " + name(instances, p.importer()))
                            .toList(), first.result().finding()));
        }
        out.sort(Comparator.comparingInt(PreflightReport.Blamed::pairs).reversed());
        return out;
    }

    /**
     * Whom a pair's finding blames: the source's is the exporter's, the target's and local ones the importer's (it
     * ran the exchange). A pull blames a failed call to the peer on the exporter it called, and the importer's own
     * missing token on the importer (PullExchange).
     */
    static String blamedId(PreflightPair p) {
        Finding f = p.result().finding();
        if (f == null) {
            return p.importer();
        }
        return f.blame() == Blame.SOURCE ? p.exporter() : p.importer();
    }

    private static String code(PreflightPair p) {
        Finding f = p.result().finding();
        return f == null ? "UNNAMED" : f.code();
    }

    static boolean sameNode(PreflightPair p) {
        return p.result().sourceNode() != null && p.result().sourceNode().equals(p.result().targetNode());
    }

    static String name(Map<String, Instance> instances, String id) {
        Instance i = instances.get(id);
        return i != null ? i.name() : id;
    }

    private static List<Instance> orderedInstances(String selfId, Map<String, Instance> instances) {
        List<Instance> list = new ArrayList<>();
        Instance self = instances.get(selfId);
        if (self != null) {
            list.add(self);
        }
        instances.values().stream().filter(i -> !i.id().equals(selfId))
                .sorted(Comparator.comparing(Instance::name)).forEach(list::add);
        return list;
    }
}
