package dev.imexprobe.node;

import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.kubernetes.CliqueLabel;
import dev.imexprobe.kubernetes.ComputeDomainStatus;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The Node label {@code nvidia.com/gpu.clique} beside NVML. NVML is read live and goes first: the label sets the
 * IMEX domain only of a GPU NVML could not be asked about (no fabric info at all), and where NVML answered for GPUs
 * that are not still joining, the label must name the one NVLink domain those GPUs report, or it is
 * CLIQUE_LABEL_MISMATCH. GPUs still joining (NOT_STARTED, IN_PROGRESS) are left to FABRIC_NOT_COMPLETED and
 * FABRIC_STATE_STUCK.
 */
public final class CliqueLabelCheck {

    private CliqueLabelCheck() {
    }

    /** The GPUs with their domains refined, what /v1/node shows of the label, and the disagreement (or null). */
    public record Result(List<GpuDevice> gpus, NodeReport.CliqueLabelView view, Finding finding) {
    }

    public static Result apply(String node, List<GpuDevice> gpus, CliqueLabel label) {
        if (label == null) {
            return new Result(gpus, null, null);
        }
        String domain = label.domain();
        String detail = label.detail();
        if (CliqueLabel.OK.equals(label.state()) && domain == null) {
            detail = "the value is not <cluster UUID>.<clique ID>: not used";
        }
        List<GpuDevice> out = new ArrayList<>();
        List<Integer> usedFor = new ArrayList<>();
        for (GpuDevice g : gpus) {
            if (g.fabric() == null && domain != null) {
                out.add(g.withImexDomain(domain));
                usedFor.add(g.index());
            } else {
                out.add(g);
            }
        }
        Map<String, List<String>> nvml = nvmlDomains(gpus);
        Finding finding = null;
        if (domain != null && disagrees(nvml, domain)) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("node", node);
            e.put("label", label.value());
            e.put("labelDomain", domain);
            e.put("nvml", describe(nvml));
            e.put("nvmlDomains", List.copyOf(new TreeSet<>(nvml.keySet())));
            finding = FindingCode.CLIQUE_LABEL_MISMATCH.finding(e);
        }
        return new Result(List.copyOf(out), new NodeReport.CliqueLabelView(label.state(), label.value(), domain,
                List.copyOf(usedFor), detail, label.readAt()), finding);
    }

    /**
     * A ComputeDomain whose entry for this node gives a {@code cliqueID} other than the NVLink domain NVML reports
     * (DOMAIN_MEMBERS_DISAGREE): the DRA driver placed the node's IMEX daemon by a clique its GPUs are not in.
     */
    public static List<Finding> computeDomains(List<GpuDevice> gpus, ComputeDomainStatus domains) {
        if (domains == null || !ComputeDomainStatus.OK.equals(domains.state())) {
            return List.of();
        }
        Map<String, List<String>> nvml = nvmlDomains(gpus);
        List<Finding> out = new ArrayList<>();
        for (ComputeDomainStatus.Entry cd : domains.computeDomains()) {
            String domain = CliqueLabel.domainOf(cd.cliqueId());
            if (domain == null || !disagrees(nvml, domain)) {
                continue;
            }
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("detail", "ComputeDomain " + cd.qualifiedName() + " lists this node with cliqueID " + cd.cliqueId()
                    + " (" + domain + "), but NVML says " + describe(nvml));
            e.put("computeDomain", cd.qualifiedName());
            e.put("cliqueId", cd.cliqueId());
            out.add(FindingCode.DOMAIN_MEMBERS_DISAGREE.finding(e));
        }
        return List.copyOf(out);
    }

    /** NVML's domain per GPU it answered about, GPUs still joining left out; "no NVLink fabric (STATE)" for none. */
    static Map<String, List<String>> nvmlDomains(List<GpuDevice> gpus) {
        Map<String, List<String>> nvml = new TreeMap<>();
        for (GpuDevice g : gpus) {
            FabricInfo f = g.fabric();
            if (f != null && f.state() != FabricInfo.STATE_NOT_STARTED && f.state() != FabricInfo.STATE_IN_PROGRESS) {
                String d = g.imexDomain() != null && g.imexDomain().startsWith("fabric:") ? g.imexDomain()
                        : "no NVLink fabric (" + f.stateName() + ")";
                nvml.computeIfAbsent(d, k -> new ArrayList<>()).add(Integer.toString(g.index()));
            }
        }
        return nvml;
    }

    private static boolean disagrees(Map<String, List<String>> nvml, String domain) {
        return !nvml.isEmpty() && !(nvml.size() == 1 && nvml.containsKey(domain));
    }

    private static String describe(Map<String, List<String>> nvml) {
        List<String> parts = new ArrayList<>();
        nvml.forEach((d, idx) -> parts.add("GPU " + String.join(", ", idx) + ": " + d));
        return String.join("; ", parts);
    }
}
