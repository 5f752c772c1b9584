package dev.imexprobe.peer;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.net.InetAddress;
import java.net.URI;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where a peer agent listens, plus what we know about how it was found.
 *
 * <p>{@code host} is a DNS name (lower-cased), a dotted-quad IPv4 address, or an IPv6 literal kept without
 * brackets in its RFC 5952 form ({@code fd00::1}), so the same endpoint reported by DNS ({@code fd00:0:0:0:0:0:0:1})
 * and by the Kubernetes API ({@code fd00::1}) is one peer. {@link #hostPort()} adds the brackets back.
 *
 * <p>Identity is the endpoint only: {@link #equals} and {@link #hashCode} compare {@code host} and {@code port}
 * and ignore the metadata ({@code source}, {@code podName}, {@code nodeName}, each null when unknown), so a
 * {@code Set<PeerAddress>} holds each endpoint once and {@code peers.contains(PeerAddress.parse("10.0.0.7:8080"))}
 * works whatever source found it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PeerAddress(String host, int port, String source, String podName, String nodeName) {

    // RFC 1123 labels; '_' is tolerated because some internal DNS names carry it.
    private static final String LABEL = "[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?";
    private static final Pattern HOST_NAME = Pattern.compile("(?=.{1,253}\\.?$)" + LABEL + "(\\." + LABEL + ")*\\.?");
    private static final Pattern DIGITS_AND_DOTS = Pattern.compile("[0-9.]+");

    public PeerAddress {
        host = canonicalHost(host);
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("peer port " + port + " for host '" + host
                    + "' is out of range: use 1..65535");
        }
        source = blankToNull(source);
        podName = blankToNull(podName);
        nodeName = blankToNull(nodeName);
    }

    /** An endpoint with no metadata. */
    public PeerAddress(String host, int port) {
        this(host, port, null, null, null);
    }

    /**
     * Parses {@code host:port} or {@code [ipv6]:port}. Surrounding whitespace is ignored.
     *
     * @throws IllegalArgumentException naming the entry and what is wrong with it
     */
    public static PeerAddress parse(String entry) {
        return parse(entry, null);
    }

    /** Like {@link #parse(String)}, recording which discovery source the entry came from. */
    public static PeerAddress parse(String entry, String source) {
        if (entry == null || entry.isBlank()) {
            throw new IllegalArgumentException("empty peer address: expected host:port or [ipv6]:port");
        }
        String s = entry.strip();
        String host;
        String portText;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0) {
                throw bad(entry, "'[' without ']': write IPv6 literals as [fd00::1]:8080");
            }
            host = s.substring(1, close);
            if (host.indexOf(':') < 0) {
                throw bad(entry, "brackets are only for IPv6 literals: write an IPv4 address or name as host:port");
            }
            String rest = s.substring(close + 1);
            if (!rest.startsWith(":")) {
                throw bad(entry, "missing port after ']': expected [ipv6]:port");
            }
            portText = rest.substring(1);
        } else {
            int first = s.indexOf(':');
            if (first < 0) {
                throw bad(entry, "missing port: expected host:port");
            }
            if (first != s.lastIndexOf(':')) {
                throw bad(entry, "an IPv6 literal needs brackets, e.g. [fd00::1]:8080");
            }
            host = s.substring(0, first);
            portText = s.substring(first + 1);
        }
        int port = parsePort(entry, portText);
        try {
            return new PeerAddress(host, port, source, null, null);
        } catch (IllegalArgumentException e) {
            throw bad(entry, e.getMessage());
        }
    }

    /** {@code host:port}, with brackets around an IPv6 literal: {@code [fd00::1]:8080}. */
    public String hostPort() {
        return (isIpv6() ? "[" + host + "]" : host) + ":" + port;
    }

    /** The agent's base URL on this endpoint, e.g. {@code http://[fd00::1]:8080}. */
    public URI baseUri(String scheme) {
        return URI.create(scheme + "://" + hostPort());
    }

    @JsonIgnore
    public boolean isIpv6() {
        return host.indexOf(':') >= 0;
    }

    /** True when {@code host} is an IP literal (no DNS lookup is needed to reach it). */
    @JsonIgnore
    public boolean isIpLiteral() {
        return isIpv6() || DIGITS_AND_DOTS.matcher(host).matches();
    }

    /** This endpoint with the given metadata (nulls mean unknown). */
    public PeerAddress withMetadata(String newSource, String newPodName, String newNodeName) {
        return new PeerAddress(host, port, newSource, newPodName, newNodeName);
    }

    /** This endpoint with each unknown metadata field filled from {@code other} (the same endpoint). */
    public PeerAddress mergedWith(PeerAddress other) {
        return new PeerAddress(host, port,
                source != null ? source : other.source,
                podName != null ? podName : other.podName,
                nodeName != null ? nodeName : other.nodeName);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PeerAddress p && port == p.port && host.equals(p.host);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, port);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(hostPort());
        if (source != null || podName != null || nodeName != null) {
            sb.append(" (").append(source == null ? "?" : source);
            if (podName != null) {
                sb.append(", pod ").append(podName);
            }
            if (nodeName != null) {
                sb.append(", node ").append(nodeName);
            }
            sb.append(')');
        }
        return sb.toString();
    }

    /**
     * The canonical text of an IP address: dotted quad for IPv4 (and IPv4-mapped IPv6), RFC 5952 for IPv6
     * (lower case, longest zero run compressed). Used for addresses that come from the resolver or from
     * {@link java.net.NetworkInterface}, whose {@code getHostAddress()} is not compressed.
     */
    public static String canonicalText(InetAddress address) {
        byte[] b = address.getAddress();
        if (b.length == 4) {
            return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        // Longest run of at least two zero groups; the first one on a tie (RFC 5952 section 4.2).
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLength - 1;
                continue;
            }
            if (!sb.isEmpty() && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }

    private static String canonicalHost(String host) {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("peer host is empty");
        }
        String h = host.strip();
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (h.indexOf(':') >= 0) {
            if (h.indexOf('%') >= 0) {
                throw new IllegalArgumentException("IPv6 zone IDs ('" + h + "') are not supported: link-local "
                        + "addresses do not reach other nodes; use the pod's or node's global or unique-local address");
            }
            try {
                return canonicalText(InetAddress.ofLiteral(h));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + h + "' is not a valid IPv6 address");
            }
        }
        h = h.toLowerCase(Locale.ROOT);
        if (DIGITS_AND_DOTS.matcher(h).matches()) {
            return strictIpv4(h);
        }
        if (!HOST_NAME.matcher(h).matches()) {
            throw new IllegalArgumentException("'" + host.strip() + "' is neither an IP address nor a valid DNS name "
                    + "(letters, digits, '-', '.'; labels of at most 63 characters)");
        }
        return h;
    }

    // Only a.b.c.d with each part 0..255 and no leading zeros: "010.1.1.1" is octal to some tools and decimal
    // to others, and "10.1" means 10.0.0.1 to inet_aton; refusing them avoids probing a surprise address.
    private static String strictIpv4(String h) {
        String[] parts = h.split("\\.", -1);
        boolean ok = parts.length == 4;
        for (int i = 0; ok && i < 4; i++) {
            String p = parts[i];
            ok = !p.isEmpty() && p.length() <= 3 && !(p.length() > 1 && p.charAt(0) == '0')
                    && Integer.parseInt(p) <= 255;
        }
        if (!ok) {
            throw new IllegalArgumentException("'" + h + "' is not a valid IPv4 address (expected four numbers "
                    + "0..255 without leading zeros, e.g. 10.0.0.7)");
        }
        return h;
    }

    private static int parsePort(String entry, String text) {
        if (text.isEmpty()) {
            throw bad(entry, "missing port after ':'");
        }
        if (text.length() > 5 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw bad(entry, "port '" + text + "' is not a number in 1..65535");
        }
        int port = Integer.parseInt(text);
        if (port < 1 || port > 65535) {
            throw bad(entry, "port " + port + " is out of range: use 1..65535");
        }
        return port;
    }

    private static IllegalArgumentException bad(String entry, String why) {
        return new IllegalArgumentException("invalid peer address '" + entry.strip() + "': " + why);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
