package dev.imexprobe.kubernetes;

import java.time.Instant;

/**
 * This agent's own Node's {@code nvidia.com/gpu.clique} label, as the Kubernetes API says it. GPU feature discovery
 * sets it to {@code <NVLink cluster UUID>.<clique ID>} when every fabric-attached GPU of the node agrees on both,
 * and leaves it out otherwise (docs/deploy.md names the source).
 *
 * @param state  {@code ok} (the label is set), {@code unset} (the Node has no such label), {@code absent} (404: no
 *               Node of this name), {@code forbidden} (401/403: RBAC), {@code error} (no answer, another status)
 * @param value  the label's value; null unless ok
 * @param detail why, for every state but ok
 * @param readAt when the API was last asked
 */
public record CliqueLabel(String state, String value, String detail, Instant readAt) {

    public static final String NAME = "nvidia.com/gpu.clique";
    public static final String OK = "ok";
    public static final String UNSET = "unset";
    public static final String ABSENT = "absent";
    public static final String FORBIDDEN = "forbidden";
    public static final String ERROR = "error";

    /**
     * The label as an IMEX domain name ({@code fabric:<clusterUuid>/<cliqueId>}, as the node's GPUs name theirs), or
     * null when it is not set or not of the form {@code <uuid>.<decimal clique>}.
     */
    public String domain() {
        return OK.equals(state) ? domainOf(value) : null;
    }

    /**
     * {@code <uuid>.<decimal clique>} (GPU feature discovery's label, a ComputeDomain's {@code cliqueID}) as an IMEX
     * domain name, or null when it is not of that form.
     */
    public static String domainOf(String value) {
        if (value == null) {
            return null;
        }
        int dot = value.lastIndexOf('.');
        if (dot <= 0 || dot == value.length() - 1) {
            return null;
        }
        String cluster = value.substring(0, dot);
        String clique = value.substring(dot + 1);
        if (!cluster.matches("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
                || !clique.matches("[0-9]{1,20}")) {
            return null;
        }
        return "fabric:" + cluster.toLowerCase(java.util.Locale.ROOT) + "/" + clique;
    }
}
