package dev.imexprobe.probe;

import dev.imexprobe.cuda.FabricInfo;

/**
 * The IMEX domain of a GPU: the GPUs whose FABRIC handles can import each other by design. A GPU registered in an
 * NVLink fabric (NVML state COMPLETED, status success, a cluster UUID) belongs to its cluster and clique
 * ({@code fabric:<clusterUuid>/<cliqueId>}); any other GPU only to its own host ({@code host:<id>}: HGX nodes such as
 * the H200 report NOT_SUPPORTED, and their handles import only within the node). The host id is what all
 * containers of one node share (the kernel's boot id; the fake driver's host).
 */
public final class ImexDomain {

    private static final String NO_CLUSTER = "00000000-0000-0000-0000-000000000000";
    private static final String FABRIC = "fabric:";

    private ImexDomain() {
    }

    public static String of(FabricInfo fabric, String hostId) {
        if (fabric != null && fabric.state() == FabricInfo.STATE_COMPLETED && fabric.status() == 0
                && fabric.clusterUuid() != null && !fabric.clusterUuid().equals(NO_CLUSTER)) {
            return FABRIC + fabric.clusterUuid() + "/" + Long.toUnsignedString(fabric.cliqueId());
        }
        return "host:" + hostId;
    }

    /** Whether a domain is an NVLink fabric's (a cluster and clique), not one host's; false for null. */
    public static boolean isFabric(String domain) {
        return domain != null && domain.startsWith(FABRIC);
    }

    /** The cluster UUID of a fabric domain ({@link #isFabric}). */
    public static String cluster(String fabricDomain) {
        return fabricDomain.substring(FABRIC.length(), fabricDomain.lastIndexOf('/'));
    }

    /** The clique id of a fabric domain ({@link #isFabric}). */
    public static String clique(String fabricDomain) {
        return fabricDomain.substring(fabricDomain.lastIndexOf('/') + 1);
    }

    /** Whether two GPUs can import each other's handles by design; unknown (null) domains are not judged. */
    public static boolean same(String a, String b) {
        return a == null || b == null || a.equals(b);
    }
}
