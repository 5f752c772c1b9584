package dev.imexprobe.peer;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Peers listed in configuration ({@code imexprobe.peers.static}): a comma-separated list of {@code host:port} or
 * {@code [ipv6]:port}. Whitespace around entries and empty entries (a trailing comma from templating) are ignored,
 * duplicates are dropped. Every entry is validated here, at start, so a typo fails the agent's start-up instead of
 * silently shrinking the mesh. Self may be listed (the same list for every node); {@link CompositeDiscovery}
 * skips it.
 */
public final class StaticPeers implements PeerDiscovery {

    public static final String SOURCE = "static";

    private final Set<PeerAddress> peers;
    private final DiscoveryStatus status;

    /**
     * @throws IllegalArgumentException naming every invalid entry
     */
    public StaticPeers(String commaList) {
        this(commaList, Clock.systemUTC());
    }

    /**
     * @throws IllegalArgumentException naming every invalid entry
     */
    public StaticPeers(String commaList, Clock clock) {
        this(parseList(commaList), clock);
    }

    public StaticPeers(Collection<PeerAddress> peers, Clock clock) {
        Set<PeerAddress> tagged = new LinkedHashSet<>();
        for (PeerAddress p : peers) {
            tagged.add(p.source() == null ? p.withMetadata(SOURCE, p.podName(), p.nodeName()) : p);
        }
        this.peers = Collections.unmodifiableSet(tagged);
        this.status = new DiscoveryStatus(SOURCE, clock.instant(), null, null, 0, this.peers.size());
    }

    @Override
    public Set<PeerAddress> peers() {
        return peers;
    }

    @Override
    public List<DiscoveryStatus> statuses() {
        return List.of(status);
    }

    private static List<PeerAddress> parseList(String commaList) {
        List<PeerAddress> out = new ArrayList<>();
        if (commaList == null) {
            return out;
        }
        List<String> errors = new ArrayList<>();
        for (String entry : commaList.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            try {
                out.add(PeerAddress.parse(entry, SOURCE));
            } catch (IllegalArgumentException e) {
                errors.add(e.getMessage());
            }
        }
        if (!errors.isEmpty()) {
            throw new IllegalArgumentException("imexprobe.peers.static: " + String.join("; ", errors)
                    + " (fix the list: comma-separated host:port or [ipv6]:port)");
        }
        return out;
    }
}
