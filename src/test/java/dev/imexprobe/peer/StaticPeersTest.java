package dev.imexprobe.peer;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StaticPeersTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

    @Test
    void parsesACommaListToleratingWhitespaceAndDroppingDuplicates() {
        StaticPeers peers = new StaticPeers(" node-a:8080 ,\t[fd00::1]:8080,10.0.0.7:9090, node-a:8080,"
                + "[fd00:0::1]:8080 ,", CLOCK);
        assertThat(peers.peers()).extracting(PeerAddress::hostPort)
                .containsExactly("node-a:8080", "[fd00::1]:8080", "10.0.0.7:9090");
        assertThat(peers.peers()).allSatisfy(p -> assertThat(p.source()).isEqualTo("static"));
        assertThat(peers.statuses()).singleElement().satisfies(s -> {
            assertThat(s.source()).isEqualTo("static");
            assertThat(s.peerCount()).isEqualTo(3);
            assertThat(s.lastSuccess()).isEqualTo(CLOCK.instant());
            assertThat(s.failing()).isFalse();
        });
    }

    @Test
    void emptyOrMissingListMeansNoPeers() {
        assertThat(new StaticPeers("", CLOCK).peers()).isEmpty();
        assertThat(new StaticPeers((String) null, CLOCK).peers()).isEmpty();
        assertThat(new StaticPeers(" , ", CLOCK).peers()).isEmpty();
    }

    @Test
    void invalidEntriesFailAtConstructionNamingEachOne() {
        assertThatThrownBy(() -> new StaticPeers("node-a:8080, node-b, fd00::1:8080", CLOCK))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("imexprobe.peers.static: ")
                .hasMessageContaining("'node-b'")
                .hasMessageContaining("missing port")
                .hasMessageContaining("'fd00::1:8080'")
                .hasMessageContaining("needs brackets")
                .hasMessageNotContaining("'node-a:8080'");
    }

    @Test
    void peersSetIsImmutable() {
        StaticPeers peers = new StaticPeers("a:1", CLOCK);
        assertThatThrownBy(() -> peers.peers().clear()).isInstanceOf(UnsupportedOperationException.class);
    }
}
