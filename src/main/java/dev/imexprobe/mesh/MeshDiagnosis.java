package dev.imexprobe.mesh;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Blame across many pairs. An endpoint (one GPU of one node: one agent in the per-GPU topology) that fails as
 * importer for most of the sources that probe it is at fault, not those sources; one whose exports fail on most
 * targets is at fault, not the targets. One pair alone proves neither, so each rule needs two witnesses, and
 * pairs within one node are left out (they fail for same-node reasons, e.g. the seed case, that say nothing about
 * either endpoint alone). A known-bad source does not count against its targets, and the other way round.
 */
public final class MeshDiagnosis {

    /** The share of witnesses that must agree. */
    static final double MAJORITY = 0.5;

    private MeshDiagnosis() {
    }

    /** One pair's outcome, for the purpose of blame; a null GPU makes the node itself the endpoint. */
    public record Outcome(String sourceNode, String sourceGpu, String targetNode, String targetGpu, boolean failed) {

        /** A pair between whole nodes (one agent per node, or GPUs not told apart). */
        public Outcome(String sourceNode, String targetNode, boolean failed) {
            this(sourceNode, null, targetNode, null, failed);
        }

        String source() {
            return endpoint(sourceNode, sourceGpu);
        }

        String target() {
            return endpoint(targetNode, targetGpu);
        }
    }

    static String endpoint(String node, String gpu) {
        return gpu == null ? node : node + "/" + gpu;
    }

    /** Mesh findings and which endpoints they blame. */
    public record Blame(List<Finding> findings, Set<String> failingTargets, Set<String> failingSources) {

        /** The blame a failed pair between whole nodes should carry; null keeps its own. */
        public dev.imexprobe.finding.Blame forPair(String sourceNode, String targetNode) {
            return forPair(sourceNode, null, targetNode, null);
        }

        /** The blame a failed pair should carry in the light of the whole mesh; null keeps its own. */
        public dev.imexprobe.finding.Blame forPair(String sourceNode, String sourceGpu, String targetNode,
                                                     String targetGpu) {
            boolean target = failingTargets.contains(endpoint(targetNode, targetGpu));
            boolean source = failingSources.contains(endpoint(sourceNode, sourceGpu));
            if (target && !source) {
                return dev.imexprobe.finding.Blame.TARGET;
            }
            if (source && !target) {
                return dev.imexprobe.finding.Blame.SOURCE;
            }
            return null;
        }
    }

    public static Blame diagnose(List<Outcome> outcomes) {
        Map<String, String[]> where = new TreeMap<>();
        for (Outcome o : outcomes) {
            where.put(o.source(), new String[] {o.sourceNode(), o.sourceGpu()});
            where.put(o.target(), new String[] {o.targetNode(), o.targetGpu()});
        }
        List<Outcome> across = outcomes.stream().filter(o -> !o.sourceNode().equals(o.targetNode())).toList();
        Set<String> targets = failing(across, Set.of(), true);
        Set<String> sources = failing(across, targets, false);
        targets = failing(across, sources, true); // once more, with the bad sources known
        List<Finding> findings = new ArrayList<>();
        for (String t : targets) {
            Map<String, Boolean> witnesses = witnesses(across, t, sources, true);
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("target", label(where.get(t)));
            e.put("targetNode", where.get(t)[0]);
            if (where.get(t)[1] != null) {
                e.put("targetGpu", where.get(t)[1]);
            }
            e.put("failedSources", witnesses.values().stream().filter(b -> b).count());
            e.put("sources", witnesses.size());
            e.put("failingFrom", witnesses.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).toList());
            findings.add(FindingCode.TARGET_FAILING.finding(e));
        }
        for (String s : sources) {
            Map<String, Boolean> witnesses = witnesses(across, s, targets, false);
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("source", label(where.get(s)));
            e.put("sourceNode", where.get(s)[0]);
            if (where.get(s)[1] != null) {
                e.put("sourceGpu", where.get(s)[1]);
            }
            e.put("failedTargets", witnesses.values().stream().filter(b -> b).count());
            e.put("targets", witnesses.size());
            e.put("failingTo", witnesses.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).toList());
            findings.add(FindingCode.SOURCE_FAILING.finding(e));
        }
        return new Blame(List.copyOf(findings), Set.copyOf(targets), Set.copyOf(sources));
    }

    /** "node-a" or "node-a GPU-12345678…" for the sentence a user reads. */
    private static String label(String[] nodeAndGpu) {
        String gpu = nodeAndGpu[1];
        return gpu == null ? nodeAndGpu[0] : nodeAndGpu[0] + " " + (gpu.length() > 12 ? gpu.substring(0, 12) + "…" : gpu);
    }

    /** Endpoints failing for a majority of at least two witnesses, not counting the excluded ones. */
    private static Set<String> failing(List<Outcome> across, Set<String> excluded, boolean asTarget) {
        Set<String> endpoints = new TreeSet<>();
        for (Outcome o : across) {
            endpoints.add(asTarget ? o.target() : o.source());
        }
        Set<String> out = new TreeSet<>();
        for (String e : endpoints) {
            Map<String, Boolean> w = witnesses(across, e, excluded, asTarget);
            long failed = w.values().stream().filter(b -> b).count();
            if (failed >= 2 && failed > w.size() * MAJORITY) {
                out.add(e);
            }
        }
        return out;
    }

    /** The other side of every pair of endpoint e, and whether that pair failed; excluded endpoints left out. */
    private static Map<String, Boolean> witnesses(List<Outcome> across, String e, Set<String> excluded,
                                                  boolean asTarget) {
        Map<String, Boolean> w = new TreeMap<>();
        for (Outcome o : across) {
            String self = asTarget ? o.target() : o.source();
            String other = asTarget ? o.source() : o.target();
            if (self.equals(e) && !excluded.contains(other)) {
                w.merge(other, o.failed(), Boolean::logicalOr);
            }
        }
        return w;
    }
}
