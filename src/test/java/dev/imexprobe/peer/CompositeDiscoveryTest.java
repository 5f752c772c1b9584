package dev.imexprobe.peer;

import dev.imexprobe.testing.MutableClock;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

class CompositeDiscoveryTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    /** A source serving whatever the test sets, or throwing. */
    private static final class FakeSource implements PeerDiscovery {
        private final String name;
        private volatile Set<PeerAddress> peers;
        private volatile boolean broken;

        FakeSource(String name, PeerAddress... peers) {
            this.name = name;
            this.peers = Set.of(peers);
        }

        @Override
        public Set<PeerAddress> peers() {
            if (broken) {
                throw new IllegalStateException("broken source");
            }
            return peers;
        }

        @Override
        public List<DiscoveryStatus> statuses() {
            return List.of(new DiscoveryStatus(name, null, null, null, 0, peers.size()));
        }
    }

    @Test
    void unionsSourcesOncePerEndpointWithMergedMetadata() {
        StaticPeers statics = new StaticPeers("10.0.0.1:8080, 10.0.0.2:8080", clock);
        FakeSource kubernetes = new FakeSource("kubernetes",
                new PeerAddress("10.0.0.2", 8080, "kubernetes", "imexprobe-b", "node-b"),
                new PeerAddress("10.0.0.3", 8080, "kubernetes", "imexprobe-c", "node-c"));
        CompositeDiscovery all = new CompositeDiscovery(List.of(statics, kubernetes), p -> false);

        Set<PeerAddress> peers = all.peers();
        assertThat(peers).extracting(PeerAddress::hostPort)
                .containsExactlyInAnyOrder("10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080");
        PeerAddress b = peers.stream().filter(p -> p.host().equals("10.0.0.2")).findFirst().orElseThrow();
        assertThat(b.source()).isEqualTo("static");
        assertThat(b.podName()).isEqualTo("imexprobe-b");
        assertThat(b.nodeName()).isEqualTo("node-b");
        assertThat(all.statuses()).extracting(DiscoveryStatus::source).containsExactly("static", "kubernetes");
    }

    @Test
    void excludesSelfByTheCallersPredicate() {
        PeerAddress self = PeerAddress.parse("10.0.0.1:8080");
        StaticPeers statics = new StaticPeers("10.0.0.1:8080, 10.0.0.1:9090, 10.0.0.2:8080", clock);
        CompositeDiscovery all = new CompositeDiscovery(List.of(statics), self::equals);
        assertThat(all.peers()).extracting(PeerAddress::hostPort)
                .containsExactlyInAnyOrder("10.0.0.1:9090", "10.0.0.2:8080");

        Predicate<PeerAddress> byPodName = p -> "imexprobe-me".equals(p.podName());
        FakeSource kubernetes = new FakeSource("kubernetes",
                new PeerAddress("10.0.0.5", 8080, "kubernetes", "imexprobe-me", "node-a"),
                new PeerAddress("10.0.0.6", 8080, "kubernetes", "imexprobe-other", "node-b"));
        assertThat(new CompositeDiscovery(List.of(kubernetes), byPodName).peers())
                .extracting(PeerAddress::podName).containsExactly("imexprobe-other");
    }

    @Test
    void aThrowingSourceOrPredicateDoesNotHideTheOthers() {
        FakeSource broken = new FakeSource("broken", PeerAddress.parse("10.0.0.9:8080"));
        broken.broken = true;
        FakeSource fine = new FakeSource("fine", PeerAddress.parse("10.0.0.1:8080"));
        assertThat(new CompositeDiscovery(List.of(broken, fine), p -> false).peers())
                .containsExactly(PeerAddress.parse("10.0.0.1:8080"));
        assertThat(new CompositeDiscovery(List.of(fine), p -> {
            throw new IllegalStateException("predicate bug");
        }).peers()).containsExactly(PeerAddress.parse("10.0.0.1:8080"));
    }

    @Test
    void followsItsSourcesOnEveryCall() {
        FakeSource source = new FakeSource("dns", PeerAddress.parse("10.0.0.1:8080"));
        CompositeDiscovery all = new CompositeDiscovery(List.of(source), p -> false);
        assertThat(all.peers()).hasSize(1);
        source.peers = Set.of(PeerAddress.parse("10.0.0.1:8080"), PeerAddress.parse("10.0.0.2:8080"));
        assertThat(all.peers()).hasSize(2);
        assertThat(new CompositeDiscovery(List.of(), p -> false).peers()).isEmpty();
    }
}
