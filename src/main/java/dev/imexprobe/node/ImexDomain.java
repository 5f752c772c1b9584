package dev.imexprobe.node;

import java.util.List;

/**
 * The domain view of {@code nvidia-imex-ctl -N -j}. The shape relied on (seen in NVIDIA's DCGM tests and in
 * scripts that read live output): {@code {"nodes": {"<id>": {"status", "host", "hostName", "version",
 * "connections": {"<id>": {"host", "status"}}}}, "timestamp", "status": "UP|DOWN|DEGRADED"}}. Anything else is
 * kept verbatim as {@link Parse#UNPARSED}, so a new tool version degrades the report instead of breaking it.
 *
 * @param parse     whether the shape was understood
 * @param status    the domain status ({@code UP}, {@code DOWN}, {@code DEGRADED}), as printed
 * @param timestamp the tool's timestamp, as printed
 * @param nodes     the configured members, each with its connections, sorted by id
 * @param raw       the output, kept only when unparsed
 * @param error     why it was not understood, null when parsed
 */
public record ImexDomain(Parse parse, String status, String timestamp, List<Node> nodes, String raw, String error) {

    public enum Parse { PARSED, UNPARSED }

    public ImexDomain {
        nodes = nodes == null ? List.of() : List.copyOf(nodes);
    }

    /**
     * One member of the domain. Peers whose daemon is down are listed too (status UNAVAILABLE), rebuilt from the
     * node config rather than reported by the peer.
     */
    public record Node(String id, String status, String host, String hostName, String version,
                       List<Connection> connections) {

        public Node {
            connections = connections == null ? List.of() : List.copyOf(connections);
        }
    }

    /** This member's link to another one, e.g. {@code CONNECTED} or {@code INVALID}. */
    public record Connection(String id, String host, String status) {
    }
}
