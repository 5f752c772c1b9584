package dev.imexprobe.peer;

import java.util.List;
import java.util.Set;

/**
 * A source of peer agents to probe.
 *
 * <p>{@link #peers()} never throws: a source that cannot reach its backend (DNS, the Kubernetes API) returns its
 * last known good set and records the error in {@link #statuses()}, so one flaky source never empties the mesh.
 * Implementations are safe to call from several threads.
 */
public interface PeerDiscovery {

    /** The peers known now (may look the source up again); never null, never throws. */
    Set<PeerAddress> peers();

    /** One status per underlying source (a composite reports each of its sources). */
    List<DiscoveryStatus> statuses();
}
