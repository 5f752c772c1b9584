package dev.imexprobe.condition;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.mesh.PairState;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Judges this node's {@code ImexFabricImport} condition from the pairs this agent measured.
 *
 * <ul>
 *   <li>A pair counts as failing once it failed {@code rounds} times in a row (the same debounce as the alerts'
 *       {@code for:}); one failed round changes nothing.</li>
 *   <li>{@code False} when a failing pair blames this node: its finding blames the source and this node
 *       exported, or the target and this node imported, or the node itself (local); or when this node's exports
 *       fail into every other node it probes (two at least), whatever each finding says. The reason is the most
 *       frequent finding code among them, in CamelCase ({@code CREATE_NOT_PERMITTED} → {@code CreateNotPermitted});
 *       the message names the failing pairs and the finding's remedy.</li>
 *   <li>{@code True} when at least one pair passed and no failing pair blames this node: a peer whose imports
 *       fail is that peer's problem and shows on that peer's node.</li>
 *   <li>{@code Unknown} when nothing was probed: observer mode, no channel by configuration (the agent was told
 *       none is expected and it has none), no peers, no result yet.</li>
 * </ul>
 */
public final class NodeJudge {

    /** The Kubernetes condition type. */
    public static final String TYPE = "ImexFabricImport";
    public static final String REASON_PASSING = "ImportsPass";
    public static final String REASON_NOTHING_PROBED = "NothingProbed";
    public static final String REASON_OBSERVER = "ObserverMode";
    public static final String REASON_SETTLING = "NotYetJudged";
    public static final String REASON_NO_CHANNEL = "NoChannelConfigured";

    /** Kubernetes does not bound a condition's message, but kubectl describe and events do: stay readable. */
    static final int MAX_MESSAGE = 1024;
    private static final int PAIRS_NAMED = 4;

    public enum Status {
        TRUE("True"), FALSE("False"), UNKNOWN("Unknown");

        private final String label;

        Status(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** What the condition should say. */
    public record Verdict(Status status, String reason, String message) {

        /** A change worth a patch and an Event: the status or the reason (a message of other pairs is not). */
        public boolean differsFrom(Verdict other) {
            return other == null || status != other.status || !reason.equals(other.reason);
        }
    }

    private final String node;
    private final int rounds;

    /**
     * @param node   this node's name, as pairs name it
     * @param rounds failed rounds in a row before a pair counts as failing (at least 1)
     */
    public NodeJudge(String node, int rounds) {
        if (rounds < 1) {
            throw new IllegalArgumentException("imexprobe.node-condition.rounds must be at least 1, got " + rounds);
        }
        this.node = node;
        this.rounds = rounds;
    }

    public Verdict judge(List<PairState> all, boolean observer) {
        return judge(all, observer, false);
    }

    /**
     * @param noChannelByConfiguration this agent has no usable IMEX channel and was told none is expected
     *                                 ({@code imexprobe.node-condition.channel-expected=false})
     */
    public Verdict judge(List<PairState> all, boolean observer, boolean noChannelByConfiguration) {
        if (observer) {
            return new Verdict(Status.UNKNOWN, REASON_OBSERVER, "this agent runs in observer mode and probes "
                    + "nothing; the condition says nothing about the fabric");
        }
        if (noChannelByConfiguration) {
            return new Verdict(Status.UNKNOWN, REASON_NO_CHANNEL, "this agent has no IMEX channel and none is "
                    + "configured (imexprobe.node-condition.channel-expected=false; the chart's imex.channel.mode=observer): "
                    + "fabric exports cannot be tested here; give the agent a channel to judge this node");
        }
        // not_probed pairs (other IMEX domain, a GPU's compute mode or MIG) were never tried: they count for nothing
        List<PairState> mine = all.stream().filter(p -> p.state() != PairState.State.NOT_PROBED)
                .filter(p -> node.equals(p.sourceNode()) || node.equals(p.targetNode())).toList();
        List<PairState> failing = mine.stream()
                .filter(p -> p.state() == PairState.State.FAILED && p.consecutiveFailures() >= rounds).toList();
        List<PairState> blamed = new ArrayList<>(failing.stream().filter(this::blamesThisNode).toList());
        if (blamed.isEmpty() && failsIntoEveryOtherNode(all, failing)) {
            blamed.addAll(failing);
        }
        long passing = mine.stream().filter(p -> p.state() == PairState.State.OK).count();
        if (!blamed.isEmpty()) {
            return failed(blamed, mine.size());
        }
        if (passing > 0) {
            String others = failing.isEmpty() ? "" : "; " + failing.size() + " failing pair(s) blame their peer: "
                    + names(failing);
            // No count of passing pairs: a pair failing one round would change the message and cost a patch.
            return new Verdict(Status.TRUE, REASON_PASSING, clip("this node's GPUs export and import fabric memory "
                    + "with their peers (" + mine.size() + " pair(s) probed)" + others));
        }
        if (mine.stream().anyMatch(p -> p.state() == PairState.State.OK || p.state() == PairState.State.FAILED)) {
            return new Verdict(Status.UNKNOWN, REASON_SETTLING, clip("no pair of this node has passed yet and none "
                    + "has failed " + rounds + " rounds in a row: " + names(mine)));
        }
        return new Verdict(Status.UNKNOWN, REASON_NOTHING_PROBED, "nothing was probed: no peer discovered, no "
                + "result yet, or no channel by configuration; see /v1/mesh and imexprobe_peers_discovered");
    }

    private boolean blamesThisNode(PairState p) {
        Finding f = p.finding();
        if (f == null) {
            return node.equals(p.sourceNode());
        }
        return f.blame() == Blame.LOCAL
                || f.blame() == Blame.SOURCE && node.equals(p.sourceNode())
                || f.blame() == Blame.TARGET && node.equals(p.targetNode());
    }

    /**
     * This node's exports fail into every other node it knows, two nodes at least: this node is the common part. A
     * node whose pairs are not probed by design (another IMEX domain, an observer, a GPU without a context) counts
     * among the others: it said who it is, so this node reaches it, and two peers down from the start on nodes of
     * their own domains (an HGX cluster) do not make this node the common part.
     */
    private boolean failsIntoEveryOtherNode(List<PairState> all, List<PairState> failing) {
        Set<String> targets = new TreeSet<>();
        Set<String> failingTargets = new TreeSet<>();
        for (PairState p : all) {
            if (node.equals(p.sourceNode()) && !node.equals(p.targetNode()) && p.state() != PairState.State.UNKNOWN) {
                targets.add(p.targetNode());
            }
        }
        for (PairState p : failing) {
            if (node.equals(p.sourceNode()) && !node.equals(p.targetNode())) {
                failingTargets.add(p.targetNode());
            }
        }
        return targets.size() >= 2 && failingTargets.equals(targets);
    }

    private Verdict failed(List<PairState> blamed, int total) {
        Map<String, Integer> byCode = new LinkedHashMap<>();
        Map<String, Finding> example = new LinkedHashMap<>();
        for (PairState p : blamed) {
            String code = p.finding() != null ? p.finding().code() : "DRIVER_ERROR";
            byCode.merge(code, 1, Integer::sum);
            if (p.finding() != null) {
                example.putIfAbsent(code, p.finding());
            }
        }
        String code = byCode.entrySet().stream()
                .max(Comparator.<Map.Entry<String, Integer>>comparingInt(Map.Entry::getValue)
                        .thenComparing(Map.Entry::getKey, Comparator.reverseOrder()))
                .orElseThrow().getKey();
        Finding f = example.get(code);
        String remedy = f != null && f.remedy() != null && !f.remedy().isBlank() ? " Remedy: " + f.remedy() : "";
        return new Verdict(Status.FALSE, camelCase(code), clip(blamed.size() + " of " + total + " pair(s) of this "
                + "node failed " + rounds + "+ rounds in a row (" + code + "): " + names(blamed) + "." + remedy));
    }

    private static String names(List<PairState> pairs) {
        StringBuilder s = new StringBuilder();
        int shown = 0;
        for (PairState p : pairs) {
            if (shown == PAIRS_NAMED) {
                s.append(", and ").append(pairs.size() - shown).append(" more");
                break;
            }
            if (shown++ > 0) {
                s.append(", ");
            }
            s.append(p.sourceNode()).append('/').append(p.sourceGpu()).append(" → ").append(p.targetNode())
                    .append('/').append(p.targetGpu());
            if (p.stage() != null) {
                s.append(" (").append(p.stage());
                if (p.cuResult() != null) {
                    s.append(' ').append(p.cuResult());
                }
                s.append(')');
            }
        }
        return s.toString();
    }

    /** NO_IMEX_CHANNEL → NoImexChannel: Kubernetes reasons are CamelCase. */
    public static String camelCase(String code) {
        StringBuilder s = new StringBuilder();
        for (String part : code.toLowerCase(Locale.ROOT).split("_")) {
            if (!part.isEmpty()) {
                s.append(Character.toUpperCase(part.charAt(0))).append(part, 1, part.length());
            }
        }
        return s.toString();
    }

    private static String clip(String s) {
        return s.length() <= MAX_MESSAGE ? s : s.substring(0, MAX_MESSAGE - 1) + "…";
    }
}
