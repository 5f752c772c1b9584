package dev.imexprobe.peer;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Peers behind a headless Service ({@code imexprobe.peers.dns}, {@code name:port}): every A and AAAA record of the
 * name, each time {@link #peers()} is asked, each with the configured port.
 *
 * <p>A headless Service ({@code clusterIP: None}) answers with one record per ready pod, so the set follows the
 * DaemonSet. The JVM caches answers ({@code networkaddress.cache.ttl}, 30 s by default), which is about one mesh
 * interval. A lookup that fails or hangs keeps the last known set; the resolver runs on a virtual thread so a
 * stuck {@code getaddrinfo} cannot hold the caller beyond the timeout.
 */
public final class DnsPeers extends LookedUpPeers {

    public static final String SOURCE = "dns";
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    /** Name → addresses; the system resolver in production, a fake in tests. */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String name) throws UnknownHostException;
    }

    /** {@link InetAddress#getAllByName}: A and AAAA records through the system resolver. */
    public static final Resolver SYSTEM_RESOLVER = InetAddress::getAllByName;

    private static final Executor LOOKUPS = task -> Thread.ofVirtual().name("imexprobe-dns-peers").start(task);

    private final String name;
    private final int port;
    private final Resolver resolver;
    private final Duration timeout;

    /**
     * @param nameAndPort {@code name:port} of the headless Service
     * @throws IllegalArgumentException when {@code nameAndPort} is not {@code name:port}
     */
    public DnsPeers(String nameAndPort, Resolver resolver, Duration timeout, Clock clock) {
        super(SOURCE, clock);
        PeerAddress target;
        try {
            target = PeerAddress.parse(nameAndPort);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("imexprobe.peers.dns: " + e.getMessage()
                    + " (expected the headless Service's name:port, e.g. imexprobe.gpu-ops.svc.cluster.local:8080)");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("DNS lookup timeout must be positive, got " + timeout);
        }
        this.name = target.host();
        this.port = target.port();
        this.resolver = resolver;
        this.timeout = timeout;
    }

    public DnsPeers(String nameAndPort) {
        this(nameAndPort, SYSTEM_RESOLVER, DEFAULT_TIMEOUT, Clock.systemUTC());
    }

    @Override
    Set<PeerAddress> lookUp() throws DiscoveryException {
        CompletableFuture<InetAddress[]> answer = new CompletableFuture<>();
        LOOKUPS.execute(() -> {
            try {
                answer.complete(resolver.resolve(name));
            } catch (Throwable t) {
                answer.completeExceptionally(t);
            }
        });
        InetAddress[] addresses;
        try {
            addresses = answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new DiscoveryException("DNS lookup of '" + name + "' did not answer within " + timeout.toMillis()
                    + " ms: check the cluster DNS (CoreDNS pods, /etc/resolv.conf of the agent)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoveryException("DNS lookup of '" + name + "' was interrupted");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof UnknownHostException) {
                throw noRecords();
            }
            throw new DiscoveryException("DNS lookup of '" + name + "' failed: " + cause, cause);
        }
        if (addresses == null || addresses.length == 0) {
            throw noRecords();
        }
        Set<PeerAddress> out = new LinkedHashSet<>();
        for (InetAddress a : addresses) {
            out.add(new PeerAddress(PeerAddress.canonicalText(a), port, SOURCE, null, null));
        }
        return out;
    }

    private DiscoveryException noRecords() {
        return new DiscoveryException("DNS name '" + name + "' has no A or AAAA records: check that the headless "
                + "Service exists (clusterIP: None), that the name includes its namespace, and that its selector "
                + "matches ready agent pods");
    }
}
