package dev.imexprobe.peer;

import dev.imexprobe.testing.MutableClock;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OwnEndpointsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    private static final Map<String, InetAddress[]> DNS = Map.of(
            "me.gpu-ops.svc", new InetAddress[]{InetAddress.ofLiteral("10.0.0.5")},
            "other.gpu-ops.svc", new InetAddress[]{InetAddress.ofLiteral("10.0.0.6")});

    private OwnEndpoints own(AtomicReference<Set<String>> local) {
        return new OwnEndpoints(8080, local::get, Set.of("Node-A"), name -> {
            InetAddress[] a = DNS.get(name);
            if (a == null) {
                throw new UnknownHostException(name);
            }
            return a;
        }, clock);
    }

    @Test
    void recognisesLoopbackInterfaceAddressesAndOwnNamesOnTheOwnPort() {
        OwnEndpoints own = own(new AtomicReference<>(Set.of("10.0.0.5", "fd00::5")));
        assertThat(own.test(PeerAddress.parse("127.0.0.1:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("127.3.4.5:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("[::1]:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("0.0.0.0:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("10.0.0.5:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("[fd00:0:0::5]:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("localhost:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("node-a:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("me.gpu-ops.svc:8080"))).isTrue();

        assertThat(own.test(PeerAddress.parse("127.0.0.1:8081"))).as("another agent on this host").isFalse();
        assertThat(own.test(PeerAddress.parse("10.0.0.5:9090"))).isFalse();
        assertThat(own.test(PeerAddress.parse("10.0.0.6:8080"))).isFalse();
        assertThat(own.test(PeerAddress.parse("other.gpu-ops.svc:8080"))).isFalse();
        assertThat(own.test(PeerAddress.parse("unknown.example:8080"))).isFalse();
    }

    @Test
    void rereadsInterfaceAddressesAfterTheRefreshInterval() {
        AtomicReference<Set<String>> local = new AtomicReference<>(Set.of("10.0.0.5"));
        AtomicInteger reads = new AtomicInteger();
        OwnEndpoints own = new OwnEndpoints(8080, () -> {
            reads.incrementAndGet();
            return local.get();
        }, Set.of(), name -> new InetAddress[0], clock);
        PeerAddress newIp = PeerAddress.parse("10.0.0.7:8080");
        assertThat(own.test(newIp)).isFalse();
        local.set(Set.of("10.0.0.7"));
        assertThat(own.test(newIp)).as("cached").isFalse();
        clock.advance(OwnEndpoints.REFRESH);
        assertThat(own.test(newIp)).isTrue();
        assertThat(reads).hasValue(2);
    }

    @Test
    void worksOnThisMachinesRealInterfaces() throws Exception {
        OwnEndpoints own = new OwnEndpoints(8080);
        assertThat(own.test(PeerAddress.parse("127.0.0.1:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("localhost:8080"))).isTrue();
        assertThat(own.test(PeerAddress.parse("192.0.2.1:8080"))).as("TEST-NET-1").isFalse();
        InetAddress anyInterfaceAddress = NetworkInterface.networkInterfaces()
                .flatMap(NetworkInterface::inetAddresses)
                .filter(a -> !a.isLinkLocalAddress())
                .findFirst().orElseThrow();
        assertThat(own.test(new PeerAddress(PeerAddress.canonicalText(anyInterfaceAddress), 8080))).isTrue();
        assertThat(OwnEndpoints.interfaceAddresses()).contains("127.0.0.1");
    }

    @Test
    void ownPortMustBeValid() {
        assertThatThrownBy(() -> new OwnEndpoints(0)).hasMessageContaining("1..65535");
    }
}
