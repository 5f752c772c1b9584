package dev.imexprobe.bench;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The ports agents are started on: below the ephemeral range, never handed out twice, free when chosen. */
class FreePortTest {

    @Test
    void portsAreBelowTheEphemeralRangeDistinctAndBindable() throws IOException {
        int low = AgentJvm.ephemeralLow();
        assertThat(low).as("the ephemeral range's first port, as read").isBetween(1025, 65535);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            int p = AgentJvm.freePort();
            assertThat(seen.add(p)).as("port %d handed out twice", p).isTrue();
            if (low > 21000) {
                assertThat(p).as("below the ephemeral range from %d", low).isBetween(20000, low - 1);
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", p));
                assertThat(s.getLocalPort()).isEqualTo(p);
            }
        }
    }
}
