package dev.imexprobe.mesh;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.kubernetes.ComputeDomainStatus;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A ComputeDomain that says Ready while the mesh's imports between its nodes fail (the DRA driver's issue #1417).
 * The controller's Ready covers the IMEX daemons (each node's daemon answers ready); it says nothing about the
 * channel each pod holds. So a pair between two nodes the ComputeDomain calls ready that fails at import names a
 * layer: 800 NOT_PERMITTED is the importer's channel, any other result there the daemons. Only failed pairs count:
 * a pair {@code not_probed} by design (observer, another IMEX domain, a refused GPU) never does, nor a pair within
 * one node (the daemons take no part in it), nor a failure before the import (the exporter's own).
 */
public final class ComputeDomainDiagnosis {

    /** The pairs a finding names; the rest are counted. */
    static final int PAIRS_NAMED = 6;

    private ComputeDomainDiagnosis() {
    }

    public static List<Finding> diagnose(ComputeDomainStatus domains, List<PairState> pairs) {
        if (domains == null || !ComputeDomainStatus.OK.equals(domains.state())) {
            return List.of();
        }
        List<Finding> out = new ArrayList<>();
        for (ComputeDomainStatus.Entry cd : domains.computeDomains()) {
            List<PairState> channel = new ArrayList<>();
            List<PairState> daemon = new ArrayList<>();
            for (PairState p : pairs) {
                if (p.state() != PairState.State.FAILED || !"import".equals(p.stage())
                        || p.sourceNode().equals(p.targetNode())
                        || !Boolean.TRUE.equals(cd.saysReady(p.sourceNode()))
                        || !Boolean.TRUE.equals(cd.saysReady(p.targetNode()))) {
                    continue;
                }
                (Integer.valueOf(800).equals(p.cuResult()) ? channel : daemon).add(p);
            }
            if (!channel.isEmpty()) {
                Map<String, Object> e = evidence(cd, channel);
                e.put("importers", List.copyOf(new TreeSet<>(channel.stream().map(PairState::targetNode).toList())));
                out.add(FindingCode.COMPUTE_DOMAIN_READY_CHANNEL_FAILS.finding(e));
            }
            if (!daemon.isEmpty()) {
                out.add(FindingCode.COMPUTE_DOMAIN_READY_DAEMON_FAILS.finding(evidence(cd, daemon)));
            }
        }
        return List.copyOf(out);
    }

    private static Map<String, Object> evidence(ComputeDomainStatus.Entry cd, List<PairState> failed) {
        Set<String> nodes = new TreeSet<>();
        Set<String> named = new TreeSet<>();
        Map<String, Integer> results = new TreeMap<>();
        for (PairState p : failed) {
            nodes.add(p.sourceNode());
            nodes.add(p.targetNode());
            named.add(p.sourceNode() + " → " + p.targetNode());
            results.merge(p.stage() + " " + p.cuResultName(), 1, Integer::sum);
        }
        List<String> pairs = new ArrayList<>(named.stream().limit(PAIRS_NAMED).toList());
        if (named.size() > PAIRS_NAMED) {
            pairs.add("… " + (named.size() - PAIRS_NAMED) + " more");
        }
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("computeDomain", cd.qualifiedName());
        e.put("status", cd.status());
        e.put("nodes", String.join(", ", nodes.stream().map(n -> n + ": " + memberStatus(cd, n)).toList()));
        e.put("failedPairs", failed.size());
        e.put("pairs", String.join(", ", pairs));
        e.put("driverResult", results.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
                .orElse(null));
        return e;
    }

    private static String memberStatus(ComputeDomainStatus.Entry cd, String node) {
        for (ComputeDomainStatus.Member m : cd.members()) {
            if (m.name().equals(node)) {
                return m.status() != null ? m.status() : "ComputeDomain " + cd.status();
            }
        }
        return "not listed";
    }
}
