package dev.imexprobe.peer;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Recognises this agent among discovered peers by the port it listens on plus any address that reaches this
 * machine: loopback ({@code 127.0.0.0/8}, {@code ::1}), the wildcard address, every address of the machine's
 * network interfaces (in a pod: the pod IP; with host networking: the node's), and the machine's own host name
 * or {@code localhost}. Other host names are resolved (through the JVM's DNS cache) and count as self when any
 * of their addresses is local.
 *
 * <p>Interface addresses are re-read at most every {@link #REFRESH} so a hot mesh loop does not enumerate
 * interfaces for every peer. Pass it, possibly combined with the agent's known pod IP, as the self predicate of
 * {@link CompositeDiscovery}.
 */
public final class OwnEndpoints implements Predicate<PeerAddress> {

    static final Duration REFRESH = Duration.ofSeconds(30);

    private final int ownPort;
    private final Supplier<Set<String>> localAddresses;
    private final Set<String> ownNames;
    private final DnsPeers.Resolver resolver;
    private final Clock clock;
    private volatile Set<String> cached = Set.of();
    private volatile Instant cachedAt;

    /** The machine's interfaces, host name and the system resolver. */
    public OwnEndpoints(int ownPort) {
        this(ownPort, OwnEndpoints::interfaceAddresses, ownHostNames(), DnsPeers.SYSTEM_RESOLVER, Clock.systemUTC());
    }

    /**
     * @param localAddresses canonical texts ({@link PeerAddress#canonicalText}) of this machine's addresses
     * @param ownNames       host names of this machine (compared case-insensitively); {@code localhost} is added
     */
    public OwnEndpoints(int ownPort, Supplier<Set<String>> localAddresses, Set<String> ownNames,
                        DnsPeers.Resolver resolver, Clock clock) {
        if (ownPort < 1 || ownPort > 65535) {
            throw new IllegalArgumentException("own port " + ownPort + " is out of range: use 1..65535");
        }
        this.ownPort = ownPort;
        this.localAddresses = localAddresses;
        Set<String> names = new HashSet<>();
        names.add("localhost");
        for (String name : ownNames) {
            names.add(name.toLowerCase(Locale.ROOT));
        }
        this.ownNames = Set.copyOf(names);
        this.resolver = resolver;
        this.clock = clock;
    }

    @Override
    public boolean test(PeerAddress peer) {
        if (peer.port() != ownPort) {
            return false;
        }
        if (peer.isIpLiteral()) {
            return isLocal(InetAddress.ofLiteral(peer.host()));
        }
        String name = peer.host().endsWith(".") ? peer.host().substring(0, peer.host().length() - 1) : peer.host();
        if (ownNames.contains(name)) {
            return true;
        }
        try {
            for (InetAddress address : resolver.resolve(name)) {
                if (isLocal(address)) {
                    return true;
                }
            }
        } catch (UnknownHostException e) {
            // a name we cannot resolve cannot be shown to be us; the probe will say it is unreachable
        }
        return false;
    }

    private boolean isLocal(InetAddress address) {
        return address.isLoopbackAddress() || address.isAnyLocalAddress()
                || local().contains(PeerAddress.canonicalText(address));
    }

    private Set<String> local() {
        Instant now = clock.instant();
        Instant at = cachedAt;
        if (at == null || !now.isBefore(at.plus(REFRESH))) {
            cached = Set.copyOf(localAddresses.get());
            cachedAt = now;
        }
        return cached;
    }

    /** Canonical texts of every address on every interface of this machine (empty if they cannot be listed). */
    public static Set<String> interfaceAddresses() {
        Set<String> out = new HashSet<>();
        try {
            NetworkInterface.networkInterfaces()
                    .flatMap(NetworkInterface::inetAddresses)
                    .forEach(a -> out.add(PeerAddress.canonicalText(a)));
        } catch (SocketException e) {
            return Collections.emptySet();
        }
        return out;
    }

    private static Set<String> ownHostNames() {
        Set<String> names = new HashSet<>();
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            names.add(env.strip());
        }
        try {
            names.add(InetAddress.getLocalHost().getHostName());
        } catch (UnknownHostException e) {
            // no resolvable host name: interface addresses still identify us
        }
        return names;
    }
}
