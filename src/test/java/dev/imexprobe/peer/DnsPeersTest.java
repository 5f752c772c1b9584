package dev.imexprobe.peer;

import dev.imexprobe.testing.MutableClock;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DnsPeersTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    @Test
    void returnsEveryAAndAaaaRecordWithThePortAndAsksAgainEachTime() throws Exception {
        AtomicReference<InetAddress[]> answer = new AtomicReference<>(new InetAddress[]{
                InetAddress.ofLiteral("10.0.0.1"), InetAddress.ofLiteral("10.0.0.2"),
                InetAddress.ofLiteral("fd00:0:0:0:0:0:0:3")});
        AtomicInteger lookups = new AtomicInteger();
        List<String> names = new ArrayList<>();
        DnsPeers dns = new DnsPeers("imexprobe.gpu-ops.svc.cluster.local:8080", name -> {
            lookups.incrementAndGet();
            names.add(name);
            return answer.get();
        }, Duration.ofSeconds(2), clock);

        assertThat(dns.peers()).extracting(PeerAddress::hostPort)
                .containsExactly("10.0.0.1:8080", "10.0.0.2:8080", "[fd00::3]:8080");
        assertThat(dns.peers()).allSatisfy(p -> assertThat(p.source()).isEqualTo("dns"));

        answer.set(new InetAddress[]{InetAddress.ofLiteral("10.0.0.9")});
        assertThat(dns.peers()).extracting(PeerAddress::hostPort).containsExactly("10.0.0.9:8080");
        assertThat(lookups).hasValue(3);
        assertThat(names).containsOnly("imexprobe.gpu-ops.svc.cluster.local");
        assertThat(dns.statuses().getFirst())
                .returns(1, DiscoveryStatus::peerCount).returns(false, DiscoveryStatus::failing);
    }

    @Test
    void failedLookupKeepsLastKnownPeersAndRecordsTheError() throws Exception {
        AtomicReference<InetAddress[]> answer = new AtomicReference<>(new InetAddress[]{
                InetAddress.ofLiteral("10.0.0.1")});
        DnsPeers dns = new DnsPeers("imexprobe:8080", name -> {
            InetAddress[] a = answer.get();
            if (a == null) {
                throw new UnknownHostException(name);
            }
            return a;
        }, Duration.ofSeconds(2), clock);
        Set<PeerAddress> first = dns.peers();
        Instant firstSuccess = clock.instant();

        clock.advance(Duration.ofSeconds(30));
        answer.set(null);
        assertThat(dns.peers()).isEqualTo(first);
        assertThat(dns.peers()).isEqualTo(first);
        DiscoveryStatus status = dns.statuses().getFirst();
        assertThat(status.failing()).isTrue();
        assertThat(status.consecutiveFailures()).isEqualTo(2);
        assertThat(status.lastSuccess()).isEqualTo(firstSuccess);
        assertThat(status.lastErrorAt()).isEqualTo(clock.instant());
        assertThat(status.lastError()).contains("'imexprobe'", "no A or AAAA records", "headless");
        assertThat(status.peerCount()).isEqualTo(1);

        answer.set(new InetAddress[]{InetAddress.ofLiteral("10.0.0.2")});
        assertThat(dns.peers()).extracting(PeerAddress::host).containsExactly("10.0.0.2");
        assertThat(dns.statuses().getFirst()).returns(false, DiscoveryStatus::failing)
                .returns(0, DiscoveryStatus::consecutiveFailures);
        assertThat(dns.statuses().getFirst().lastError()).as("kept for the operator").isNotNull();
    }

    @Test
    void hangingResolverTimesOutAndKeepsLastKnown() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Boolean> hang = new AtomicReference<>(false);
        DnsPeers dns = new DnsPeers("imexprobe:8080", name -> {
            if (hang.get()) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return new InetAddress[]{InetAddress.ofLiteral("10.0.0.1")};
        }, Duration.ofMillis(200), clock);
        assertThat(dns.peers()).hasSize(1);
        hang.set(true);
        long start = System.nanoTime();
        assertThat(dns.peers()).hasSize(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        assertThat(dns.statuses().getFirst().lastError()).contains("did not answer within 200 ms");
        release.countDown();
    }

    @Test
    void neverFailedSourceWithNoAnswerServesEmpty() {
        DnsPeers dns = new DnsPeers("nothing.invalid:8080", name -> new InetAddress[0], Duration.ofSeconds(1), clock);
        assertThat(dns.peers()).isEmpty();
        assertThat(dns.statuses().getFirst()).returns(null, DiscoveryStatus::lastSuccess)
                .returns(true, DiscoveryStatus::failing);
    }

    @Test
    void resolverBugIsRecordedNotThrown() {
        DnsPeers dns = new DnsPeers("imexprobe:8080", name -> {
            throw new IllegalStateException("boom");
        }, Duration.ofSeconds(1), clock);
        assertThat(dns.peers()).isEmpty();
        assertThat(dns.statuses().getFirst().lastError()).contains("boom");
    }

    @Test
    void randomAnswersAreReportedInFull() throws Exception {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int round = 0; round < 50; round++) {
            int n = 1 + random.nextInt(64);
            InetAddress[] answer = new InetAddress[n];
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < n; i++) {
                byte[] b = new byte[random.nextBoolean() ? 4 : 16];
                random.nextBytes(b);
                answer[i] = InetAddress.getByAddress(b);
                expected.add(new PeerAddress(PeerAddress.canonicalText(answer[i]), 8443).hostPort());
            }
            DnsPeers dns = new DnsPeers("svc:8443", name -> answer, Duration.ofSeconds(1), clock);
            assertThat(dns.peers()).as("seed %d", seed).extracting(PeerAddress::hostPort)
                    .containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    @Test
    void resolvesLocalhostWithTheSystemResolver() {
        DnsPeers dns = new DnsPeers("localhost:8080");
        assertThat(dns.peers()).isNotEmpty()
                .allSatisfy(p -> assertThat(InetAddress.ofLiteral(p.host()).isLoopbackAddress()).isTrue())
                .allSatisfy(p -> assertThat(p.port()).isEqualTo(8080));
        assertThat(dns.statuses().getFirst().failing()).isFalse();
    }

    @Test
    void configurationMustBeNameAndPort() {
        assertThatThrownBy(() -> new DnsPeers("imexprobe.gpu-ops.svc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("imexprobe.peers.dns: invalid peer address 'imexprobe.gpu-ops.svc'")
                .hasMessageContaining("missing port");
    }
}
