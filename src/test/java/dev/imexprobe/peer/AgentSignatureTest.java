package dev.imexprobe.peer;

import dev.imexprobe.peer.AgentSignature.Reason;
import dev.imexprobe.peer.AgentSignature.Scheme;
import dev.imexprobe.peer.AgentSignature.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AgentSignatureTest {

    private static final String TOKEN = "0123456789abcdef0123456789abcdef";
    private static final long NOW = 1_750_000_000L;
    private static final byte[] BODY = "{\"handle\":\"AAAA\",\"sizeBytes\":2097152}".getBytes(StandardCharsets.UTF_8);
    private static final String PATH = "/v1/imports?gpu=0&seed=7";

    private static AgentSignature at(long epochSecond) {
        return new AgentSignature(TOKEN, Clock.fixed(Instant.ofEpochSecond(epochSecond, 999_000_000), ZoneOffset.UTC));
    }

    private final AgentSignature agent = at(NOW);

    /** One MAC and one digest per thread, reused: many threads signing and verifying at once get the same values. */
    @Test
    void concurrentCallsGiveTheSameSignaturesAsOne() throws Exception {
        String expected = agent.sign("POST", PATH, BODY);
        AgentSignature otherKey = new AgentSignature("another-token-of-32-characters!!", Clock.systemUTC());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            java.util.List<java.util.concurrent.Future<Integer>> runs = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                runs.add(pool.submit(() -> {
                    int ok = 0;
                    for (int i = 0; i < 500; i++) {
                        otherKey.sign("POST", PATH, BODY); // the other instance's key never leaks into this one's MAC
                        if (agent.sign("POST", PATH, BODY).equals(expected)
                                && agent.verify(expected, "POST", PATH, BODY).reason() == Reason.OK
                                && agent.verify(expected, "POST", PATH, new byte[] {1}).reason() == Reason.BAD_SIGNATURE) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            for (java.util.concurrent.Future<Integer> f : runs) {
                assertThat(f.get(60, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(500);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void signsTheDocumentedCanonicalString() {
        // Expected values computed independently (Python hmac/hashlib) from the format in docs/api.md ("Authentication").
        assertThat(agent.sign("POST", PATH, BODY))
                .isEqualTo("IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo");
        assertThat(agent.sign("GET", "/probe?target=%5Bfd00%3A%3A1%5D%3A8080", new byte[0]))
                .isEqualTo("IMEXPROBE-HMAC ts=1750000000,sig=IGrZGY6QyABGJKlFXUioagYto4F9jt4gTEcJwWuvn5Q");
        assertThat(agent.sign("GET", "/probe?target=%5Bfd00%3A%3A1%5D%3A8080", null))
                .as("no body signs like an empty one")
                .isEqualTo(agent.sign("GET", "/probe?target=%5Bfd00%3A%3A1%5D%3A8080", new byte[0]));
    }

    @Test
    void roundTripsThroughPrecheckAndVerify() {
        String header = agent.sign("POST", PATH, BODY);
        Verdict pre = agent.precheck(header);
        assertThat(pre.ok()).isTrue();
        assertThat(pre.needsBody()).isTrue();
        assertThat(pre.scheme()).isEqualTo(Scheme.HMAC);
        Verdict full = agent.verify(header, "POST", PATH, BODY);
        assertThat(full).isEqualTo(new Verdict(Reason.OK, Scheme.HMAC, 0));
        assertThat(full.detail()).isEqualTo("authenticated");
    }

    @Test
    void anyTamperingBreaksTheSignature() {
        String header = agent.sign("POST", PATH, BODY);
        assertThat(agent.verify(header, "PUT", PATH, BODY).reason()).isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(agent.verify(header, "post", PATH, BODY).reason()).isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(agent.verify(header, "POST", "/v1/imports/x?gpu=0&seed=7", BODY).reason())
                .isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(agent.verify(header, "POST", "/v1/imports?gpu=1&seed=7", BODY).reason())
                .isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(agent.verify(header, "POST", "/v1/imports", BODY).reason()).isEqualTo(Reason.BAD_SIGNATURE);
        byte[] body = BODY.clone();
        body[3] ^= 1;
        assertThat(agent.verify(header, "POST", PATH, body).reason()).isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(agent.verify(header, "POST", PATH, new byte[0]).reason()).isEqualTo(Reason.BAD_SIGNATURE);

        String otherTs = header.replace("ts=" + NOW, "ts=" + (NOW - 1));
        Verdict verdict = agent.verify(otherTs, "POST", PATH, BODY);
        assertThat(verdict.reason()).isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(verdict.skewSeconds()).isEqualTo(1);

        String sig = header.substring(header.indexOf("sig=") + 4);
        byte[] mac = Base64.getUrlDecoder().decode(sig);
        mac[31] ^= (byte) 0x80;
        String flipped = "IMEXPROBE-HMAC ts=" + NOW + ",sig="
                + Base64.getUrlEncoder().withoutPadding().encodeToString(mac);
        assertThat(agent.verify(flipped, "POST", PATH, BODY).reason()).isEqualTo(Reason.BAD_SIGNATURE);

        AgentSignature otherToken = new AgentSignature("another-token-of-32-characters!!",
                Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC));
        assertThat(otherToken.verify(header, "POST", PATH, BODY).reason()).isEqualTo(Reason.BAD_SIGNATURE);
        assertThat(agent.verify(header, "POST", PATH, BODY).detail()).doesNotContain(TOKEN);
    }

    @Test
    void onlyTheCanonicalSpellingOfTheMacIsAccepted() {
        // 32 bytes in 43 base64url characters: the last one carries 2 bits that decode to nothing. Every other
        // spelling of that character decodes to the same MAC; each must be refused like any altered signature.
        String header = agent.sign("POST", PATH, BODY);
        String sig = header.substring(header.indexOf("sig=") + 4);
        assertThat(sig).hasSize(43);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        int last = alphabet.indexOf(sig.charAt(42));
        int sameBytes = 0;
        for (int low = 0; low < 4; low++) {
            char c = alphabet.charAt((last & ~3) | low);
            String spelled = header.substring(0, header.length() - 1) + c;
            Reason expected = c == sig.charAt(42) ? Reason.OK : Reason.MALFORMED;
            assertThat(agent.verify(spelled, "POST", PATH, BODY).reason()).as("last character %s", c)
                    .isEqualTo(expected);
            sameBytes += Base64.getUrlDecoder().decode(spelled.substring(spelled.indexOf("sig=") + 4)).length == 32
                    ? 1 : 0;
        }
        assertThat(sameBytes).as("all four spellings decode to a MAC: the check is not the decoder's").isEqualTo(4);
        assertThat(agent.verify(header + "=", "POST", PATH, BODY).reason()).as("padded canonical").isEqualTo(Reason.OK);
    }

    @Test
    void acceptsClockSkewUpToSixtySecondsEitherWay() {
        assertThat(agent.verify(at(NOW - 60).sign("POST", PATH, BODY), "POST", PATH, BODY))
                .isEqualTo(new Verdict(Reason.OK, Scheme.HMAC, 60));
        assertThat(agent.verify(at(NOW + 60).sign("POST", PATH, BODY), "POST", PATH, BODY))
                .isEqualTo(new Verdict(Reason.OK, Scheme.HMAC, -60));

        Verdict old = agent.verify(at(NOW - 61).sign("POST", PATH, BODY), "POST", PATH, BODY);
        assertThat(old).isEqualTo(new Verdict(Reason.EXPIRED, Scheme.HMAC, 61));
        assertThat(old.detail()).contains("61 s old", "±60 s", "NTP");
        Verdict future = agent.precheck(at(NOW + 61).sign("POST", PATH, BODY));
        assertThat(future).isEqualTo(new Verdict(Reason.EXPIRED, Scheme.HMAC, -61));
        assertThat(future.detail()).contains("61 s in the future");

        assertThat(agent.precheck(at(0).sign("GET", "/", null)).reason()).isEqualTo(Reason.EXPIRED);
    }

    @Test
    void bearerTokenForOperators() {
        assertThat(agent.precheck("Bearer " + TOKEN)).isEqualTo(new Verdict(Reason.OK, Scheme.BEARER, 0));
        assertThat(agent.precheck("Bearer " + TOKEN).needsBody()).isFalse();
        assertThat(agent.verify("bearer  " + TOKEN, "POST", PATH, BODY).ok()).isTrue();
        assertThat(agent.precheck("Bearer " + TOKEN + "x").reason()).isEqualTo(Reason.BAD_TOKEN);
        assertThat(agent.precheck("Bearer " + TOKEN.substring(1)).reason()).isEqualTo(Reason.BAD_TOKEN);
        assertThat(agent.precheck("Bearer wrong").reason()).isEqualTo(Reason.BAD_TOKEN);
        assertThat(agent.verify("Bearer wrong", "POST", PATH, BODY).reason()).isEqualTo(Reason.BAD_TOKEN);
        assertThat(agent.precheck("Bearer wrong").detail()).doesNotContain(TOKEN).contains("imexprobe.auth.token");
        assertThat(agent.precheck("Bearer").reason()).isEqualTo(Reason.MALFORMED);
        assertThat(agent.precheck("Bearer    ").reason()).isEqualTo(Reason.MALFORMED);
    }

    @Test
    void missingAndForeignSchemes() {
        assertThat(agent.precheck(null).reason()).isEqualTo(Reason.MISSING);
        assertThat(agent.precheck("").reason()).isEqualTo(Reason.MISSING);
        assertThat(agent.verify("  ", "GET", "/", null).reason()).isEqualTo(Reason.MISSING);
        assertThat(agent.precheck("Basic dXNlcjpwYXNz").reason()).isEqualTo(Reason.UNKNOWN_SCHEME);
        assertThat(agent.precheck("Negotiate YIIC").reason()).isEqualTo(Reason.UNKNOWN_SCHEME);
        assertThat(agent.precheck("Basic dXNlcjpwYXNz").detail()).contains("Bearer");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "IMEXPROBE-HMAC",
            "IMEXPROBE-HMAC ",
            "IMEXPROBE-HMAC ts=1750000000",
            "IMEXPROBE-HMAC sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,sig=",
            "IMEXPROBE-HMAC ts=-1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1.75e9,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=99999999999999999999,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDR",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRoAA",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo===",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPS+exjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPS/exjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,sig=!!!!",
            "IMEXPROBE-HMAC ts=1750000000,sig=AAAAAAAAAAAAAAAAAAAAAA",
            "IMEXPROBE-HMAC ts=1750000000,ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,ts=1750000000",
            "IMEXPROBE-HMAC ts=1750000000;sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,nonce=1",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo,",
            "IMEXPROBE-HMAC 1750000000,89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "IMEXPROBE-HMAC ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo\u0000",
            "IMEXPROBE-HMAC ts=１７５０000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "ts=1750000000,sig=89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo",
            "\u00e9\u00e8 x",
    })
    void malformedHeadersGiveMalformed(String header) {
        assertThat(agent.precheck(header).reason()).as(header).isEqualTo(Reason.MALFORMED);
        assertThat(agent.verify(header, "POST", PATH, BODY).reason()).as(header).isEqualTo(Reason.MALFORMED);
        assertThat(agent.precheck(header).detail()).isNotBlank();
    }

    @Test
    void acceptsParameterVariantsThatMeanTheSame() {
        String sig = "89cNBinMgPmmoklk4dPSkexjWeDMHcrafFqz76bIDRo";
        for (String header : new String[]{
                "IMEXPROBE-HMAC ts=1750000000,sig=" + sig,
                "imexprobe-hmac ts=1750000000,sig=" + sig,
                "IMEXPROBE-HMAC sig=" + sig + ",ts=1750000000",
                "IMEXPROBE-HMAC ts=1750000000, sig=" + sig,
                "  IMEXPROBE-HMAC   ts=1750000000,sig=" + sig + "=  ",
        }) {
            assertThat(agent.verify(header, "POST", PATH, BODY).reason()).as(header).isEqualTo(Reason.OK);
        }
    }

    @Test
    void randomHeadersNeverThrowAndNeverPass() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int i = 0; i < 20_000; i++) {
            String noise = randomString(random, random.nextInt(80));
            for (String header : new String[]{noise, "IMEXPROBE-HMAC " + noise, "IMEXPROBE-HMAC ts=" + noise,
                    "IMEXPROBE-HMAC ts=" + NOW + ",sig=" + noise}) {
                Verdict pre = agent.precheck(header);
                Verdict full = agent.verify(header, "POST", PATH, BODY);
                String context = "seed " + seed + ": " + header;
                assertThat(full.ok()).as(context).isFalse();
                assertThat(pre.detail()).as(context).isNotNull();
                if (header.startsWith("IMEXPROBE-HMAC ")) {
                    assertThat(full.reason()).as(context).isIn(Reason.MALFORMED, Reason.BAD_SIGNATURE);
                    assertThat(pre.reason()).as(context).isIn(Reason.MALFORMED, Reason.OK);
                } else {
                    assertThat(pre.reason()).as(context).isNotEqualTo(Reason.OK);
                }
            }
        }
    }

    @Test
    void randomBodiesRoundTripAndAnyFlippedBitFails() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int i = 0; i < 300; i++) {
            byte[] body = new byte[random.nextInt(i % 10 == 0 ? 1 << 20 : 4096)];
            random.nextBytes(body);
            String path = "/v1/exports/" + Long.toHexString(random.nextLong()) + "/verify";
            String header = agent.sign("POST", path, body);
            assertThat(agent.verify(header, "POST", path, body).ok()).as("seed %d", seed).isTrue();
            if (body.length > 0) {
                int bit = random.nextInt(body.length * 8);
                body[bit / 8] ^= (byte) (1 << (bit % 8));
                assertThat(agent.verify(header, "POST", path, body).reason()).as("seed %d", seed)
                        .isEqualTo(Reason.BAD_SIGNATURE);
            }
        }
    }

    @Test
    void tokenRules() {
        assertThatThrownBy(() -> new AgentSignature("short-token", Clock.systemUTC()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 16 characters (got 11)")
                .hasMessageNotContaining("short-token");
        assertThatThrownBy(() -> new AgentSignature(null, Clock.systemUTC())).hasMessageContaining("got none");
        assertThatThrownBy(() -> new AgentSignature(TOKEN + "\n", Clock.systemUTC()))
                .hasMessageContaining("whitespace");
        assertThat(new AgentSignature("0123456789abcdef", Clock.systemUTC())).isNotNull();
    }

    @Test
    void pathAndQueryIsTheRawRequestTarget() {
        URI probe = URI.create("http://[fd00::1]:8080/probe?target=%5Bfd00%3A%3A2%5D%3A8080");
        assertThat(AgentSignature.pathAndQuery(probe))
                .isEqualTo("/probe?target=%5Bfd00%3A%3A2%5D%3A8080");
        assertThat(AgentSignature.pathAndQuery(URI.create("http://10.0.0.1:8080"))).isEqualTo("/");
        assertThat(AgentSignature.pathAndQuery(URI.create("http://10.0.0.1:8080/v1/exports/a%2Fb")))
                .isEqualTo("/v1/exports/a%2Fb");
    }

    private static String randomString(Random random, int length) {
        StringBuilder sb = new StringBuilder(length);
        String alphabet = "abcXYZ019=,;: \t-_+/!\"'\u00e9\u0000\u00ff";
        for (int i = 0; i < length; i++) {
            sb.append(random.nextInt(4) == 0 ? (char) random.nextInt(0x3000)
                    : alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return sb.toString();
    }
}
