package dev.imexprobe.peer;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Request authentication between agents, with the shared token as key but never on the wire.
 *
 * <p>An agent signs each call with
 * <pre>Authorization: IMEXPROBE-HMAC ts=&lt;unix seconds&gt;,sig=&lt;base64url HMAC-SHA256&gt;</pre>
 * where the MAC, keyed by the token's UTF-8 bytes, covers
 * <pre>method + "\n" + pathAndQuery + "\n" + ts + "\n" + lowercase hex SHA-256 of the body</pre>
 * and is accepted while {@code |now - ts| <= 60 s}. So a {@code /probe} aimed at a stranger hands it a signature
 * for one request, not the secret. Operators (curl, scripts) may instead send {@code Authorization: Bearer <token>}.
 *
 * <p>{@code pathAndQuery} is the request target exactly as sent: raw path, percent-encoding untouched, then
 * {@code ?} and the raw query when there is one ({@link #pathAndQuery(URI)} on the client;
 * {@code getRequestURI()} + {@code "?" + getQueryString()} on a servlet server). Re-encoding on either side breaks
 * the signature, which is the point.
 *
 * <p>Replay: a captured request can be replayed, unchanged, within the 60 s window. That is accepted by design:
 * the signed endpoints are idempotent or bounded (an import only reports a verdict, an export is capped and
 * expires), and a nonce store would have to be shared by every replica of an agent for little gain. Changing
 * anything (method, path, query, body, ts) invalidates the signature.
 *
 * <p>The web layer checks in two steps so it can refuse before reading a body: {@link #precheck} (scheme,
 * syntax, time window; the whole check for a bearer token), then {@link #verify} with the body. Neither throws on
 * bad input; both return a {@link Verdict}. Comparisons of secrets and MACs are constant-time. Thread-safe.
 */
public final class AgentSignature {

    public static final String HMAC_SCHEME = "IMEXPROBE-HMAC";
    public static final String BEARER_SCHEME = "Bearer";
    public static final long MAX_SKEW_SECONDS = 60;
    public static final int MIN_TOKEN_LENGTH = 16;

    private static final String MAC_ALGORITHM = "HmacSHA256";
    private static final int MAC_BYTES = 32;
    // RFC 9110 token characters: what an auth-scheme name may consist of.
    private static final String TOKEN_CHARS = "!#$%&'*+-.^_`|~";

    /** Why a request was accepted or refused. */
    public enum Reason {
        OK, MISSING, MALFORMED, UNKNOWN_SCHEME, EXPIRED, BAD_SIGNATURE, BAD_TOKEN
    }

    /** Which credential a request carried. */
    public enum Scheme {
        NONE, BEARER, HMAC
    }

    /**
     * The outcome of a check.
     *
     * @param reason      {@code OK} or why the request is refused
     * @param scheme      the credential the header carried (NONE when absent or not one of ours)
     * @param skewSeconds {@code now - ts} for an HMAC header whose timestamp was read (positive: the request is
     *                    older than our clock), else 0
     */
    public record Verdict(Reason reason, Scheme scheme, long skewSeconds) {

        public boolean ok() {
            return reason == Reason.OK;
        }

        /** True when {@link #precheck} passed but the body still has to be checked by {@link #verify}. */
        public boolean needsBody() {
            return ok() && scheme == Scheme.HMAC;
        }

        /** A sentence for a 401 problem detail: the cause and what to do. Never contains secrets. */
        public String detail() {
            return switch (reason) {
                case OK -> "authenticated";
                case MISSING -> "no Authorization header: send 'Authorization: Bearer <token>' with the agents' "
                        + "shared token (imexprobe.auth.token)";
                case MALFORMED -> scheme == Scheme.BEARER
                        ? "Authorization header 'Bearer' carries no token: send 'Authorization: Bearer <token>'"
                        : "Authorization header is not 'IMEXPROBE-HMAC ts=<unix seconds>,sig=<base64url>' nor "
                        + "'Bearer <token>'";
                case UNKNOWN_SCHEME -> "Authorization scheme is not accepted here: use 'Bearer <token>' or an "
                        + "agent's 'IMEXPROBE-HMAC' signature";
                case EXPIRED -> "signature timestamp is " + Math.abs(skewSeconds) + " s "
                        + (skewSeconds > 0 ? "old" : "in the future") + " (allowed ±" + MAX_SKEW_SECONDS
                        + " s): check that both nodes' clocks are synchronised (NTP/chrony)";
                case BAD_SIGNATURE -> "signature does not match this request: the agents' tokens differ "
                        + "(imexprobe.auth.token) or a proxy changed the method, path, query or body";
                case BAD_TOKEN -> "bearer token is wrong: use the agents' shared token (imexprobe.auth.token)";
            };
        }

        static Verdict of(Reason reason, Scheme scheme) {
            return new Verdict(reason, scheme, 0);
        }
    }

    /** The key's MAC, one per thread. */
    private final ThreadLocal<Mac> macs;
    private final byte[] tokenDigest;
    private final Clock clock;

    /**
     * @throws IllegalArgumentException when the token is shorter than {@value #MIN_TOKEN_LENGTH} characters or
     *                                  has surrounding whitespace or control characters
     */
    public AgentSignature(String token, Clock clock) {
        if (token == null || token.length() < MIN_TOKEN_LENGTH) {
            throw new IllegalArgumentException("imexprobe.auth.token must be at least " + MIN_TOKEN_LENGTH
                    + " characters (got " + (token == null ? "none" : token.length())
                    + "): use a random token, e.g. `openssl rand -hex 16`; the Helm chart generates 32");
        }
        if (!token.equals(token.strip()) || token.chars().anyMatch(Character::isISOControl)) {
            // A trailing newline from `echo token > file` would make every agent's key differ from the operators'.
            throw new IllegalArgumentException("imexprobe.auth.token has leading/trailing whitespace or control "
                    + "characters (a newline from 'echo' into the Secret?): remove them");
        }
        byte[] tokenBytes = token.getBytes(StandardCharsets.UTF_8);
        SecretKeySpec key = new SecretKeySpec(tokenBytes, MAC_ALGORITHM);
        this.macs = ThreadLocal.withInitial(() -> newMac(key));
        this.tokenDigest = sha256(tokenBytes);
        this.clock = clock;
    }

    /** The {@code Authorization} header value for this request, signed now. */
    public String sign(String method, String pathAndQuery, byte[] body) {
        String ts = Long.toString(clock.instant().getEpochSecond());
        byte[] mac = mac(method, pathAndQuery, ts, body);
        return HMAC_SCHEME + " ts=" + ts + ",sig=" + Base64.getUrlEncoder().withoutPadding().encodeToString(mac);
    }

    /**
     * Everything that can be checked without the body: presence, scheme, syntax, the time window of a signature,
     * and the whole check of a bearer token. When the verdict {@link Verdict#needsBody()}, call {@link #verify}.
     */
    public Verdict precheck(String headerValue) {
        Parsed parsed = parse(headerValue);
        if (parsed.failure != null) {
            return parsed.failure;
        }
        if (parsed.scheme == Scheme.BEARER) {
            byte[] presented = sha256(parsed.bearerToken.getBytes(StandardCharsets.UTF_8));
            // Hash first so the comparison is constant-time whatever the presented length.
            return Verdict.of(MessageDigest.isEqual(presented, tokenDigest) ? Reason.OK : Reason.BAD_TOKEN,
                    Scheme.BEARER);
        }
        long skew = clock.instant().getEpochSecond() - parsed.ts;
        if (Math.abs(skew) > MAX_SKEW_SECONDS) {
            return new Verdict(Reason.EXPIRED, Scheme.HMAC, skew);
        }
        return new Verdict(Reason.OK, Scheme.HMAC, skew);
    }

    /** The full check: {@link #precheck}, then for a signature the MAC over this method, target and body. */
    public Verdict verify(String headerValue, String method, String pathAndQuery, byte[] body) {
        Verdict pre = precheck(headerValue);
        if (!pre.needsBody()) {
            return pre;
        }
        Parsed parsed = parse(headerValue);
        // The timestamp is signed as the text sent, so the MAC covers exactly what was on the wire.
        byte[] expected = mac(method, pathAndQuery, parsed.tsText, body);
        return MessageDigest.isEqual(expected, parsed.sig)
                ? pre
                : new Verdict(Reason.BAD_SIGNATURE, Scheme.HMAC, pre.skewSeconds());
    }

    /** The request target to sign for a URI: raw path ({@code /} when empty) plus {@code ?raw query} if any. */
    public static String pathAndQuery(URI uri) {
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        return uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
    }

    private byte[] mac(String method, String pathAndQuery, String ts, byte[] body) {
        String canonical = method + "\n" + pathAndQuery + "\n" + ts + "\n"
                + HexFormat.of().formatHex(sha256(body == null ? new byte[0] : body));
        // Mac is stateful: one per thread keeps this class thread-safe; doFinal resets it for the next call.
        // Not one per call: the provider lookup and init cost more than the MAC itself (JFR, every exchange).
        return macs.get().doFinal(canonical.getBytes(StandardCharsets.UTF_8));
    }

    private static Mac newMac(SecretKeySpec key) {
        try {
            Mac mac = Mac.getInstance(MAC_ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable in this JVM", e);
        }
    }

    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable in this JVM", e);
        }
    });

    private static byte[] sha256(byte[] bytes) {
        return SHA256.get().digest(bytes); // digest resets it
    }

    /** A header taken apart; exactly one of failure, bearerToken, (ts, sig) is set. */
    private record Parsed(Verdict failure, Scheme scheme, String bearerToken, long ts, String tsText, byte[] sig) {

        static Parsed failed(Reason reason, Scheme scheme) {
            return new Parsed(Verdict.of(reason, scheme), scheme, null, 0, null, null);
        }
    }

    private static Parsed parse(String header) {
        if (header == null || header.isBlank()) {
            return Parsed.failed(Reason.MISSING, Scheme.NONE);
        }
        String h = header.strip();
        int space = indexOfWhitespace(h);
        String scheme = space < 0 ? h : h.substring(0, space);
        String credentials = space < 0 ? "" : h.substring(space + 1).strip();
        // Auth-scheme names are case-insensitive (RFC 9110 section 11.1).
        if (scheme.equalsIgnoreCase(BEARER_SCHEME)) {
            if (credentials.isEmpty()) {
                return Parsed.failed(Reason.MALFORMED, Scheme.BEARER);
            }
            return new Parsed(null, Scheme.BEARER, credentials, 0, null, null);
        }
        if (scheme.equalsIgnoreCase(HMAC_SCHEME)) {
            return parseHmac(credentials);
        }
        // A well-formed scheme we do not accept (Basic, Negotiate…) versus noise.
        return Parsed.failed(isToken(scheme) && !credentials.isEmpty() ? Reason.UNKNOWN_SCHEME : Reason.MALFORMED,
                Scheme.NONE);
    }

    private static Parsed parseHmac(String credentials) {
        Long ts = null;
        String tsText = null;
        byte[] sig = null;
        String[] params = credentials.split(",", -1);
        if (params.length != 2) {
            return Parsed.failed(Reason.MALFORMED, Scheme.HMAC);
        }
        for (String param : params) {
            String p = param.strip();
            int eq = p.indexOf('=');
            if (eq < 0) {
                return Parsed.failed(Reason.MALFORMED, Scheme.HMAC);
            }
            String name = p.substring(0, eq).strip().toLowerCase(Locale.ROOT);
            String value = p.substring(eq + 1).strip();
            if (name.equals("ts") && ts == null) {
                ts = parseSeconds(value);
                tsText = value;
                if (ts == null) {
                    return Parsed.failed(Reason.MALFORMED, Scheme.HMAC);
                }
            } else if (name.equals("sig") && sig == null) {
                sig = decodeMac(value);
                if (sig == null) {
                    return Parsed.failed(Reason.MALFORMED, Scheme.HMAC);
                }
            } else {
                return Parsed.failed(Reason.MALFORMED, Scheme.HMAC); // unknown or repeated parameter
            }
        }
        if (ts == null || sig == null) {
            return Parsed.failed(Reason.MALFORMED, Scheme.HMAC);
        }
        return new Parsed(null, Scheme.HMAC, null, ts, tsText, sig);
    }

    private static Long parseSeconds(String value) {
        // Unsigned decimal seconds, at most 12 digits (year 33658): no sign, no overflow, no Long.parseLong quirks.
        if (value.isEmpty() || value.length() > 12) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return null;
            }
        }
        return Long.parseLong(value);
    }

    /** The URL-safe base64 alphabet and its padding; a loop, not a stream: it runs on every signed request. */
    private static boolean base64Url(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
                    || c == '=')) {
                return false;
            }
        }
        return true;
    }

    private static byte[] decodeMac(String value) {
        if (value.isEmpty() || !base64Url(value)) {
            return null;
        }
        try {
            byte[] mac = Base64.getUrlDecoder().decode(value);
            if (mac.length != MAC_BYTES) {
                return null;
            }
            // Only the canonical spelling: the decoder ignores the last character's unused bits, so another
            // spelling of the same MAC would otherwise pass for a different (flipped) signature.
            String canonical = Base64.getUrlEncoder().withoutPadding().encodeToString(mac);
            return value.equals(canonical) || value.equals(canonical + "=") ? mac : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static int indexOfWhitespace(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == ' ' || s.charAt(i) == '\t') {
                return i;
            }
        }
        return -1;
    }

    private static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = c < 128 && (Character.isLetterOrDigit(c) || TOKEN_CHARS.indexOf(c) >= 0);
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
