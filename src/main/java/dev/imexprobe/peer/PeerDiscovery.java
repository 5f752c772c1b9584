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

    /**
     * The peers as the last look-up found them, without looking up again: for metrics and pages, which anyone who
     * can reach the agent may ask for as often as they like, so they must never turn into calls to DNS or the
     * Kubernetes API (nor wait for one that hangs). Only the mesh's rounds call {@link #peers()}.
     */
    default Set<PeerAddress> known() {
        return peers();
    }

    /** One status per underlying source (a composite reports each of its sources). */
    List<DiscoveryStatus> statuses();
}
