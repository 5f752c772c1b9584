package dev.imexprobe.peer;

import java.time.Clock;
import java.util.List;
import java.util.Set;

/**
 * A discovery source with a backend to look peers up in (DNS, the Kubernetes API): each look-up goes through
 * {@link LastKnownPeers}, so a failed one keeps the last good set and shows in {@link #statuses()}.
 */
abstract class LookedUpPeers implements PeerDiscovery {

    private final LastKnownPeers lastKnown;

    LookedUpPeers(String source, Clock clock) {
        this.lastKnown = new LastKnownPeers(source, clock);
    }

    /** One look-up in the backend; throws when it cannot answer. */
    abstract Set<PeerAddress> lookUp() throws DiscoveryException;

    @Override
    public final Set<PeerAddress> peers() {
        return lastKnown.refresh(this::lookUp);
    }

    @Override
    public final Set<PeerAddress> known() {
        return lastKnown.current();
    }

    @Override
    public final List<DiscoveryStatus> statuses() {
        return List.of(lastKnown.status());
    }
}
