package dev.imexprobe.peer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The union of the configured sources, without this agent itself.
 *
 * <p>An endpoint found by several sources appears once, with the metadata of the first source that knew it,
 * completed from the others (so a static entry also shows the pod and node the Kubernetes source saw). Self is
 * recognised by a predicate from the caller: the agent knows its own pod IP and port, and can add
 * {@link OwnEndpoints} for the loopback and interface addresses a static list or DNS may name.
 */
public final class CompositeDiscovery implements PeerDiscovery {

    private static final Logger LOG = LoggerFactory.getLogger(CompositeDiscovery.class);

    private final List<PeerDiscovery> sources;
    private final Predicate<PeerAddress> isSelf;

    public CompositeDiscovery(List<? extends PeerDiscovery> sources, Predicate<PeerAddress> isSelf) {
        this.sources = List.copyOf(sources);
        this.isSelf = isSelf;
    }

    @Override
    public Set<PeerAddress> peers() {
        return union(PeerDiscovery::peers);
    }

    @Override
    public Set<PeerAddress> known() {
        return union(PeerDiscovery::known);
    }

    private Set<PeerAddress> union(Function<PeerDiscovery, Set<PeerAddress>> ask) {
        Map<PeerAddress, PeerAddress> union = new LinkedHashMap<>();
        for (PeerDiscovery source : sources) {
            Set<PeerAddress> found;
            try {
                found = ask.apply(source);
            } catch (RuntimeException e) {
                // The contract says sources never throw; a broken one still must not hide the others' peers.
                LOG.warn("peer discovery source {} threw instead of keeping its last known peers", source, e);
                continue;
            }
            for (PeerAddress peer : found) {
                union.merge(peer, peer, PeerAddress::mergedWith);
            }
        }
        Set<PeerAddress> out = new LinkedHashSet<>();
        for (PeerAddress peer : union.values()) {
            if (!isSelf(peer)) {
                out.add(peer);
            }
        }
        return Collections.unmodifiableSet(out);
    }

    @Override
    public List<DiscoveryStatus> statuses() {
        List<DiscoveryStatus> all = new ArrayList<>();
        for (PeerDiscovery source : sources) {
            all.addAll(source.statuses());
        }
        return List.copyOf(all);
    }

    private boolean isSelf(PeerAddress peer) {
        try {
            return isSelf.test(peer);
        } catch (RuntimeException e) {
            return false; // better to probe ourselves once than to drop a real peer
        }
    }
}
