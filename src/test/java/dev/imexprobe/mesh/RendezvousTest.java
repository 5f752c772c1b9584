package dev.imexprobe.mesh;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class RendezvousTest {

    private static final Function<String, String> ID = Function.identity();

    private static List<String> agents(int n) {
        return IntStream.range(0, n).mapToObj(i -> "10.0.%d.%d:8080".formatted(i / 250, i % 250 + 1)).toList();
    }

    private static List<String> othersThan(List<String> all, String self) {
        return all.stream().filter(a -> !a.equals(self)).toList();
    }

    @Test
    void zeroOrAtLeastAllPeersMeansEveryPeer() {
        List<String> peers = agents(5);

        assertThat(Rendezvous.pick(peers, 0, "self", 1, ID)).isEqualTo(peers);
        assertThat(Rendezvous.pick(peers, 5, "self", 1, ID)).isEqualTo(peers);
        assertThat(Rendezvous.pick(peers, 9, "self", 1, ID)).isEqualTo(peers);
        assertThat(Rendezvous.pick(List.<String>of(), 3, "self", 1, ID)).isEmpty();
    }

    @Test
    void picksExactlyKDistinctPeers() {
        List<String> picked = Rendezvous.pick(agents(20), 4, "self", 7, ID);

        assertThat(picked).hasSize(4).doesNotHaveDuplicates().allMatch(agents(20)::contains);
    }

    @Test
    void isDeterministicAndIgnoresTheOrderPeersArriveIn() {
        List<String> peers = agents(30);
        List<String> shuffled = new ArrayList<>(peers);
        Collections.shuffle(shuffled, new Random(42));

        List<String> first = Rendezvous.pick(peers, 5, "10.9.9.9:8080", 12, ID);
        assertThat(Rendezvous.pick(peers, 5, "10.9.9.9:8080", 12, ID)).isEqualTo(first);
        assertThat(Rendezvous.pick(shuffled, 5, "10.9.9.9:8080", 12, ID)).isEqualTo(first);
        assertThat(Rendezvous.weight("a", "b", 3)).isEqualTo(Rendezvous.weight("a", "b", 3));
    }

    @Test
    void eachPeerIsPickedByAboutKSourcesPerRound() {
        int n = 60;
        int k = 4;
        int rounds = 50;
        List<String> all = agents(n);
        Map<String, Integer> picked = new HashMap<>();
        for (int round = 1; round <= rounds; round++) {
            Map<String, Integer> thisRound = new HashMap<>();
            for (String source : all) {
                for (String p : Rendezvous.pick(othersThan(all, source), k, source, round, ID)) {
                    thisRound.merge(p, 1, Integer::sum);
                    picked.merge(p, 1, Integer::sum);
                }
            }
            assertThat(thisRound.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(n * k);
            // No hot spot: a peer probed by three times its share in one round would be a probe storm.
            assertThat(thisRound.values()).allMatch(c -> c <= 3 * k);
        }
        assertThat(picked).hasSize(n);
        for (String peer : all) {
            double perRound = picked.get(peer) / (double) rounds;
            assertThat(perRound).as("sources per round picking %s", peer).isBetween(k - 1.0, k + 1.0);
        }
    }

    @Test
    void theChoiceMovesFromRoundToRoundSoEveryPairIsMeasuredOverTime() {
        int n = 12;
        int k = 3;
        List<String> all = agents(n);
        int changed = 0;
        for (String source : all) {
            List<String> peers = othersThan(all, source);
            Set<String> seen = new HashSet<>();
            List<String> previous = null;
            for (int round = 1; round <= 40; round++) {
                List<String> now = Rendezvous.pick(peers, k, source, round, ID);
                seen.addAll(now);
                if (previous != null && !new HashSet<>(previous).equals(new HashSet<>(now))) {
                    changed++;
                }
                previous = now;
            }
            assertThat(seen).as("peers %s probed in 40 rounds", source).containsExactlyInAnyOrderElementsOf(peers);
        }
        // 12 sources × 39 round changes; with 3 of 11 the same set twice in a row is rare (1 in 165).
        assertThat(changed).isGreaterThan(12 * 39 * 9 / 10);
    }

    @Test
    void differentSourcesPickDifferentPeersInTheSameRound() {
        List<String> all = agents(40);
        Set<Set<String>> choices = new HashSet<>();
        for (String source : all) {
            choices.add(new HashSet<>(Rendezvous.pick(othersThan(all, source), 3, source, 5, ID)));
        }
        assertThat(choices).hasSizeGreaterThan(35);
    }
}
