package dev.imexprobe.mesh;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/**
 * Rendezvous (highest random weight) hashing: each source ranks the peers by a hash of (source, peer, round)
 * and probes the top k. Different sources pick different peers, every peer is picked by about k sources per
 * round, and the choice moves each round so every pair is measured over time. Nothing to coordinate.
 */
public final class Rendezvous {

    private Rendezvous() {
    }

    public static <T> List<T> pick(List<T> peers, int k, String self, long round, Function<T, String> id) {
        if (k <= 0 || k >= peers.size()) {
            return peers;
        }
        return peers.stream().sorted(Comparator.comparingLong((T p) -> weight(self, id.apply(p), round)).reversed())
                .limit(k).toList();
    }

    static long weight(String self, String peer, long round) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(self.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(peer.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(Long.toString(round).getBytes(StandardCharsets.UTF_8));
            byte[] d = md.digest();
            long w = 0;
            for (int i = 0; i < 8; i++) {
                w = (w << 8) | (d[i] & 0xff);
            }
            return w;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
