package dev.imexprobe.kubernetes;

import java.time.Instant;
import java.util.List;

/**
 * What the Kubernetes API says about this node's ComputeDomains ({@code computedomains.resource.nvidia.com}, the
 * NVIDIA DRA driver's CRD): every ComputeDomain whose {@code status.nodes[]} lists this node, with the domain's
 * global status and this node's entry. Read-only and observational: a Ready entry while imports fail is the case
 * this is shown for.
 *
 * @param state          {@code ok} (listed), {@code absent} (the API has no such resource: the DRA driver is not
 *                       installed, 404), {@code forbidden} (401/403: RBAC), {@code error} (no answer, another status)
 * @param detail         why, for every state but ok
 * @param computeDomains this node's entries, sorted by namespace and name; empty unless ok
 * @param readAt         when the API was last asked
 */
public record ComputeDomainStatus(String state, String detail, List<Entry> computeDomains, Instant readAt) {

    public static final String OK = "ok";
    public static final String ABSENT = "absent";
    public static final String FORBIDDEN = "forbidden";
    public static final String ERROR = "error";

    public ComputeDomainStatus {
        computeDomains = computeDomains == null ? List.of() : List.copyOf(computeDomains);
    }

    /**
     * One ComputeDomain that lists this node.
     *
     * @param status     the ComputeDomain's {@code status.status}: Ready or NotReady (all its nodes)
     * @param nodeStatus this node's {@code status.nodes[].status}: Ready when its IMEX daemon can broker exchanges
     * @param cliqueId   this node's {@code cliqueID} (NVLink cluster UUID and clique id)
     * @param members    every node the ComputeDomain's {@code status.nodes[]} lists, this one included, with its
     *                   status: which pairs of the mesh lie inside this ComputeDomain
     */
    public record Entry(String namespace, String name, String status, String nodeStatus, String ipAddress,
                        String cliqueId, Integer index, List<Member> members) {

        public static final String READY = "Ready";

        public Entry {
            members = members == null ? List.of() : List.copyOf(members);
        }

        /** "namespace/name", as kubectl names it. */
        public String qualifiedName() {
            return namespace + "/" + name;
        }

        /**
         * Whether this ComputeDomain says that node's IMEX daemon is ready: its own entry says Ready, or (a driver
         * that fills no per-node status) the ComputeDomain does. Null when it does not list the node.
         */
        public Boolean saysReady(String node) {
            for (Member m : members) {
                if (m.name().equals(node)) {
                    return m.status() != null ? READY.equals(m.status()) : READY.equals(status);
                }
            }
            return null;
        }
    }

    /** One node of a ComputeDomain's {@code status.nodes[]}: its name and {@code status} (null where not filled). */
    public record Member(String name, String status) {
    }
}
