package dev.imexprobe.peer;

import dev.imexprobe.peer.Prober.Identification;
import dev.imexprobe.peer.Prober.Peer;

import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who a target is (its GET /v1/node), and for how long an answer is believed: on-demand probes trust a
 * target's identity for {@link #TTL} while probes with it confirm it ({@link Confirmation}).
 */
final class PeerIdentities {

    /** How long a target's answer to GET /v1/node is trusted by on-demand probes. */
    static final Duration TTL = Duration.ofSeconds(30);

    private final PeerClient client;
    private final Map<String, Known> known = new ConcurrentHashMap<>();

    /** An identity and when it was asked for. */
    record Known(Peer peer, long askedAt) {
    }

    PeerIdentities(PeerClient client) {
        this.client = client;
    }

    /** The target's identity while it is still trusted, else null. */
    Known trusted(String target) {
        Known k = known.get(target);
        return k != null && System.nanoTime() - k.askedAt() < TTL.toNanos() ? k : null;
    }

    void remember(String target, Peer peer, long askedAt) {
        known.put(target, new Known(peer, askedAt));
    }

    /** Forgets this identity of the target (not one remembered since by another probe). */
    void forget(String target, Known k) {
        known.remove(target, k);
    }

    /** Asks a peer who it is (GET /v1/node). */
    Identification identify(String target) {
        PeerCall<JsonNode> info = client.node(target);
        if (!info.ok()) {
            return new Identification(null, info);
        }
        Peer peer = PeerAnswers.parsePeer(target, info.value());
        return peer != null ? new Identification(peer, null) : new Identification(null, PeerCall.failed(
                PeerCall.Kind.GARBLED, info.httpStatus(), "its /v1/node does not describe an imexprobe agent", info.nanos()));
    }
}
