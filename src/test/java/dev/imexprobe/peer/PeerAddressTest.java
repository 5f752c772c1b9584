package dev.imexprobe.peer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

import java.net.InetAddress;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PeerAddressTest {

    @Test
    void parsesHostNamesIpv4AndBracketedIpv6() {
        assertThat(PeerAddress.parse("agent-0.imexprobe.gpu-ops.svc:8080"))
                .returns("agent-0.imexprobe.gpu-ops.svc", PeerAddress::host).returns(8080, PeerAddress::port);
        assertThat(PeerAddress.parse(" 10.0.0.7:9090 ")).returns("10.0.0.7", PeerAddress::host);
        PeerAddress v6 = PeerAddress.parse("[fd00::1]:8080");
        assertThat(v6.host()).isEqualTo("fd00::1");
        assertThat(v6.hostPort()).isEqualTo("[fd00::1]:8080");
        assertThat(v6.isIpv6()).isTrue();
        assertThat(v6.baseUri("http").toString()).isEqualTo("http://[fd00::1]:8080");
        assertThat(PeerAddress.parse("Node-A.Example:1").host()).isEqualTo("node-a.example");
        assertThat(PeerAddress.parse("host:65535").port()).isEqualTo(65535);
    }

    @Test
    void constructorKeepsIpv6WithoutBracketsInCanonicalForm() {
        assertThat(new PeerAddress("[FD00:0:0:0:0:0:0:1]", 80).host()).isEqualTo("fd00::1");
        assertThat(new PeerAddress("fd00:0000::0001", 80)).isEqualTo(PeerAddress.parse("[fd00::1]:80"));
        assertThat(new PeerAddress("::ffff:10.1.2.3", 80).host()).isEqualTo("10.1.2.3");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "2001:db8:0:0:1:0:0:1 | 2001:db8::1:0:0:1",
            "2001:0db8::0001      | 2001:db8::1",
            "2001:db8:0:1:1:1:1:1 | 2001:db8:0:1:1:1:1:1",
            "2001:0:0:1:0:0:0:1   | 2001:0:0:1::1",
            "0:0:0:0:0:0:0:0      | ::",
            "0:0:0:0:0:0:0:1      | ::1",
            "1:0:0:0:0:0:0:0      | 1::",
            "FD00:ABCD::          | fd00:abcd::",
    })
    void rendersIpv6AsRfc5952(String literal, String canonical) {
        assertThat(PeerAddress.canonicalText(InetAddress.ofLiteral(literal))).isEqualTo(canonical);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "host                | missing port: expected host:port",
            "host:               | missing port after ':'",
            "host:0              | port 0 is out of range",
            "host:65536          | port 65536 is out of range",
            "host:http           | port 'http' is not a number",
            "host:-1             | port '-1' is not a number",
            "fd00::1:8080        | an IPv6 literal needs brackets",
            "[fd00::1            | '[' without ']'",
            "[fd00::1]8080       | missing port after ']'",
            "[fd00::1]           | missing port after ']'",
            "[10.0.0.1]:80       | brackets are only for IPv6 literals",
            "bad_host!:80        | neither an IP address nor a valid DNS name",
            "-leading.example:80 | neither an IP address nor a valid DNS name",
            "300.1.1.1:80        | not a valid IPv4 address",
            "10.1:80             | not a valid IPv4 address",
            "010.0.0.1:80        | not a valid IPv4 address",
            "[fe80::1%eth0]:80   | zone IDs",
            "[fd00::zz]:80       | not a valid IPv6 address",
            ":80                 | peer host is empty",
    })
    void rejectsBadEntriesNamingThem(String entry, String why) {
        assertThatThrownBy(() -> PeerAddress.parse(entry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid peer address '" + entry + "'")
                .hasMessageContaining(why);
    }

    @Test
    void rejectsEmptyEntriesAndBadPorts() {
        assertThatThrownBy(() -> PeerAddress.parse("  ")).hasMessageContaining("empty peer address");
        assertThatThrownBy(() -> new PeerAddress("10.0.0.1", 0)).hasMessageContaining("1..65535");
        assertThatThrownBy(() -> new PeerAddress("", 80)).hasMessageContaining("empty");
    }

    @Test
    void identityIsTheEndpointNotTheMetadata() {
        PeerAddress plain = PeerAddress.parse("10.0.0.7:8080");
        PeerAddress fromKubernetes = new PeerAddress("10.0.0.7", 8080, "kubernetes", "imexprobe-x1", "node-a");
        assertThat(fromKubernetes).isEqualTo(plain).hasSameHashCodeAs(plain);
        assertThat(Set.of(fromKubernetes)).contains(plain);
        assertThat(fromKubernetes.toString()).isEqualTo("10.0.0.7:8080 (kubernetes, pod imexprobe-x1, node node-a)");
        assertThat(plain.toString()).isEqualTo("10.0.0.7:8080");
        assertThat(plain.withMetadata("static", null, null).mergedWith(fromKubernetes))
                .returns("static", PeerAddress::source)
                .returns("imexprobe-x1", PeerAddress::podName)
                .returns("node-a", PeerAddress::nodeName);
        assertThat(new PeerAddress("10.0.0.7", 8081)).isNotEqualTo(plain);
    }

    @Test
    void serialisesOnlyItsComponentsAndOmitsUnknownMetadata() {
        JsonMapper json = JsonMapper.builder().build();
        assertThat(json.writeValueAsString(new PeerAddress("fd00::1", 8080, "dns", null, null)))
                .isEqualTo("{\"host\":\"fd00::1\",\"port\":8080,\"source\":\"dns\"}");
    }

    @Test
    void randomAddressesRoundTripThroughHostPort() throws Exception {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int i = 0; i < 2000; i++) {
            byte[] bytes = new byte[random.nextBoolean() ? 4 : 16];
            random.nextBytes(bytes);
            if (bytes.length == 16 && random.nextInt(3) == 0) {
                // zero runs of random length and place, where RFC 5952 compression matters
                int from = random.nextInt(16);
                int to = from + random.nextInt(17 - from);
                for (int b = from; b < to; b++) {
                    bytes[b] = 0;
                }
            }
            InetAddress address = InetAddress.getByAddress(bytes);
            int port = 1 + random.nextInt(65535);
            PeerAddress fromText = new PeerAddress(address.getHostAddress(), port);
            PeerAddress reparsed = PeerAddress.parse(fromText.hostPort());
            String context = "seed " + seed + ", address " + address.getHostAddress();
            assertThat(reparsed).as(context).isEqualTo(fromText);
            assertThat(reparsed.host()).as(context).isEqualTo(PeerAddress.canonicalText(address));
            assertThat(InetAddress.ofLiteral(reparsed.host())).as(context).isEqualTo(address);
            assertThat(reparsed.hostPort().startsWith("[")).as(context).isEqualTo(address.getAddress().length == 16);
        }
    }
}
