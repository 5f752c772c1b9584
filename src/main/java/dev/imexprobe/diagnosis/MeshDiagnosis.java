package dev.imexprobe.diagnosis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Blame across many pairs: a target that fails for most of the sources that probe it is at fault, not the
 * sources; a source whose exports fail on most targets is at fault, not the targets. One pair alone proves
 * neither, so each rule needs at least two witnesses.
 */
public final class MeshDiagnosis {

    /** A fraction of witnesses that must agree. */
    static final double MAJORITY = 0.5;

    private MeshDiagnosis() {
    }

    /** One pair's outcome between two nodes, for the purpose of blame. */
    public record Outcome(String sourceNode, String targetNode, boolean failed) {
    }

    /** Mesh findings and which nodes they blame. */
    public record Blame(List<Finding> findings, Set<String> failingTargets, Set<String> failingSources) {

        /** The blame a single failed pair should carry in the light of the whole mesh; null keeps its own. */
        public dev.imexprobe.diagnosis.Blame forPair(String sourceNode, String targetNode) {
            if (failingTargets.contains(targetNode)) {
                return dev.imexprobe.diagnosis.Blame.TARGET;
            }
            if (failingSources.contains(sourceNode)) {
                return dev.imexprobe.diagnosis.Blame.SOURCE;
            }
            return null;
        }
    }

    public static Blame diagnose(List<Outcome> outcomes) {
        // Judge by node: several GPUs of one node are one witness each way.
        Map<String, Map<String, Boolean>> byTarget = new TreeMap<>();
        Map<String, Map<String, Boolean>> bySource = new TreeMap<>();
        for (Outcome o : outcomes) {
            if (o.sourceNode().equals(o.targetNode())) {
                continue; // same node: neither side can be told apart from the node itself
            }
            byTarget.computeIfAbsent(o.targetNode(), k -> new TreeMap<>()).merge(o.sourceNode(), o.failed(), Boolean::logicalOr);
            bySource.computeIfAbsent(o.sourceNode(), k -> new TreeMap<>()).merge(o.targetNode(), o.failed(), Boolean::logicalOr);
        }
        List<Finding> findings = new ArrayList<>();
        Set<String> targets = new TreeSet<>();
        byTarget.forEach((target, sources) -> {
            long failed = sources.values().stream().filter(b -> b).count();
            if (failed >= 2 && failed > sources.size() * MAJORITY) {
                targets.add(target);
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("targetNode", target);
                e.put("failedSources", failed);
                e.put("sources", sources.size());
                e.put("failingFrom", sources.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).toList());
                findings.add(FindingCode.TARGET_FAILING.finding(e));
            }
        });
        Set<String> sourcesToBlame = new TreeSet<>();
        bySource.forEach((source, tgts) -> {
            // A target already blamed does not count against its sources.
            Map<String, Boolean> others = new TreeMap<>(tgts);
            others.keySet().removeAll(targets);
            long failed = others.values().stream().filter(b -> b).count();
            if (failed >= 2 && failed > others.size() * MAJORITY) {
                sourcesToBlame.add(source);
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("sourceNode", source);
                e.put("failedTargets", failed);
                e.put("targets", others.size());
                e.put("failingTo", others.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).toList());
                findings.add(FindingCode.SOURCE_FAILING.finding(e));
            }
        });
        return new Blame(List.copyOf(findings), Set.copyOf(targets), Set.copyOf(sourcesToBlame));
    }
}
