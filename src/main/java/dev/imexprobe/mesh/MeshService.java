package dev.imexprobe.mesh;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.kubernetes.ComputeDomainStatus;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.peer.PeerAddress;
import dev.imexprobe.peer.PeerCall;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.PeerDiscovery;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Builds mesh views: this agent's own pairs, or the whole domain's by asking every known peer for its
 * /v1/mesh (in parallel, each under the peer deadline). Blame is then judged over all pairs at once.
 */
public final class MeshService {

    /**
     * Peers asked for their /v1/mesh at once. Every answer (up to {@link PeerClient#MAX_REPLY}) and its JSON tree are
     * held until read into pairs: 575 peers asked together could hold more than the pod's 512 MiB limit.
     */
    static final int FAN_OUT = 8;
    /**
     * Up to this many peers the domain view holds their pairs across IMEX domains too (not probed by design; the page
     * counts them per pair of domains). Beyond, peers are asked without them: in 8 domains of 72 GPUs they were 504
     * of a peer's 575 pairs (669 kB of its answer), a 4-GPU agent's answer passed the 1 MiB cap and it showed as not
     * answering, and all of them merged are some 290,000 pairs.
     */
    public static final int ACROSS_FROM_PEERS_UP_TO = 64;
    private int acrossFromPeersUpTo = ACROSS_FROM_PEERS_UP_TO;
    /** The domain view being built, with and without the pairs apart by design; null while none is. */
    private final AtomicReference<CompletableFuture<MeshView>> withAcross = new AtomicReference<>();
    private final AtomicReference<CompletableFuture<MeshView>> without = new AtomicReference<>();

    private final AgentIdentity identity;
    private final BooleanSupplier fake;
    private final MeshState state;
    private final PeerDiscovery discovery;
    private final PeerClient client;
    private final JsonMapper json;
    private final Duration interval;
    private volatile Supplier<ComputeDomainStatus> computeDomains = () -> null;

    public MeshService(AgentIdentity identity, BooleanSupplier fake, MeshState state, PeerDiscovery discovery,
                       PeerClient client, JsonMapper json, Duration interval) {
        this.identity = identity;
        this.fake = fake;
        this.state = state;
        this.discovery = discovery;
        this.client = client;
        this.json = json;
        this.interval = interval;
    }

    /** This node's ComputeDomains (imexprobe.computedomains.enabled), held against the pairs inside them. */
    public MeshService computeDomains(Supplier<ComputeDomainStatus> source) {
        this.computeDomains = source;
        return this;
    }

    /** This agent's pairs; {@code across} false leaves out those apart by design ({@link PairState#apartByDesign}). */
    public MeshView local(boolean across) {
        List<PairState> pairs = state.snapshot().stream().filter(p -> across || !p.apartByDesign()).toList();
        return view("agent", List.of(identity.node()), List.of(), pairs);
    }

    /** For tests: the number of peers up to which their pairs apart by design are merged. */
    MeshService acrossFromPeersUpTo(int n) {
        this.acrossFromPeersUpTo = n;
        return this;
    }

    /**
     * Every agent's pairs, merged, peers asked {@value #FAN_OUT} at a time. With more than
     * {@value #ACROSS_FROM_PEERS_UP_TO} peers, or from a peer whose answer with them passes the cap, their pairs apart
     * by design are left out ({@link PairState#apartByDesign}); this agent's own stay when {@code across}.
     */
    public MeshView domain(boolean across) {
        // One fan-out at a time for each kind of view: callers that come while it runs share its result. The page
        // reloads itself every interval, and each viewer's fan-out held its own answers (about 50 MiB at 143 peers).
        AtomicReference<CompletableFuture<MeshView>> slot = across ? withAcross : without;
        CompletableFuture<MeshView> mine = new CompletableFuture<>();
        CompletableFuture<MeshView> running = slot.compareAndExchange(null, mine);
        if (running != null) {
            return running.join();
        }
        try {
            MeshView v = fanOut(across);
            mine.complete(v);
            return v;
        } catch (RuntimeException | Error e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            slot.set(null);
        }
    }

    private MeshView fanOut(boolean across) {
        Map<PairKey, PairState> merged = new LinkedHashMap<>();
        state.snapshot().stream().filter(p -> across || !p.apartByDesign()).forEach(p -> merged.put(p.key(), p));
        List<String> agents = new ArrayList<>(List.of(identity.node()));
        List<String> unreachable = new ArrayList<>();
        // The peers of the mesh's last round: a page view must not become a call to DNS or the Kubernetes API.
        List<PeerAddress> peers = new ArrayList<>(discovery.known());
        peers.sort(Comparator.comparing(PeerAddress::hostPort));
        boolean peersAcross = across && peers.size() <= acrossFromPeersUpTo;
        Semaphore slots = new Semaphore(FAN_OUT);
        // The view answers within two peer timeouts: a peer that could not be asked in time is shown as not answering
        // (8 at a time, 100 peers that do not answer took 13 timeouts).
        long timeout = client.timeout().toNanos();
        long lastStart = System.nanoTime() + timeout;
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Answer>> calls = new ArrayList<>();
            for (PeerAddress p : peers) {
                calls.add(pool.submit(() -> {
                    if (!slots.tryAcquire(Math.max(0, lastStart - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        return null;
                    }
                    try {
                        // read into pairs while holding the slot: a JSON tree waiting for a slow peer ahead of it in
                        // the merge would hold memory beyond the 8 at once
                        return read(p.hostPort(), client.mesh(p.hostPort(), peersAcross), peersAcross);
                    } finally {
                        slots.release();
                    }
                }));
            }
            for (int i = 0; i < peers.size(); i++) {
                Answer a;
                try {
                    a = calls.get(i).get();
                } catch (Exception e) {
                    a = null;
                }
                if (a == null) {
                    unreachable.add(peers.get(i).hostPort());
                    continue;
                }
                agents.add(a.node());
                a.pairs().forEach(p -> merged.merge(p.key(), p, MeshService::newer));
            }
        }
        return view("domain", agents, unreachable, new ArrayList<>(merged.values()));
    }

    /** A peer's answer read: its node and pairs; null when it did not answer with a mesh. */
    private record Answer(String node, List<PairState> pairs) {
    }

    private Answer read(String target, PeerCall<JsonNode> c, boolean withAcross) {
        if (!c.ok() || !c.value().has("pairs")) {
            return null;
        }
        List<PairState> pairs = new ArrayList<>();
        for (JsonNode n : c.value().get("pairs")) {
            PairState p;
            try {
                p = json.treeToValue(n, PairState.class);
            } catch (RuntimeException e) {
                continue; // a pair we cannot read is left out, not guessed
            }
            if (withAcross || !p.apartByDesign()) { // an older peer's answer holds them all
                pairs.add(p);
            }
        }
        return new Answer(c.value().path("agent").path("node").asString(target), pairs);
    }

    private MeshView view(String scope, List<String> agents, List<String> unreachable, List<PairState> pairs) {
        List<MeshDiagnosis.Outcome> outcomes = pairs.stream()
                .filter(p -> p.state() == PairState.State.OK || p.state() == PairState.State.FAILED)
                .map(p -> new MeshDiagnosis.Outcome(p.sourceNode(), p.sourceGpu(), p.targetNode(), p.targetGpu(),
                        p.state() == PairState.State.FAILED))
                .toList();
        MeshDiagnosis.Blame blame = MeshDiagnosis.diagnose(outcomes);
        List<PairState> judged = pairs.stream().sorted(Comparator.comparing(PairState::key)).map(p -> {
            if (p.state() != PairState.State.FAILED || p.finding() == null) {
                return p;
            }
            dev.imexprobe.finding.Blame b = blame.forPair(p.sourceNode(), p.sourceGpu(), p.targetNode(), p.targetGpu());
            return b == null || b == p.finding().blame() ? p : p.withFinding(p.finding().withBlame(b,
                    b == dev.imexprobe.finding.Blame.TARGET ? "Most sources fail on this target: blame the target."
                            : "This source fails on most targets: blame the source."));
        }).toList();
        List<Finding> findings = new ArrayList<>(blame.findings());
        findings.addAll(DomainDiagnosis.diagnose(pairs));
        findings.addAll(ComputeDomainDiagnosis.diagnose(computeDomains.get(), pairs));
        return new MeshView(identity, fake.getAsBoolean(), scope, Instant.now(), interval.toMillis() / 1000.0,
                state.lastCycle(), List.copyOf(agents), List.copyOf(unreachable), judged, List.copyOf(findings));
    }

    private static PairState newer(PairState a, PairState b) {
        if (a.lastProbe() == null) {
            return b;
        }
        if (b.lastProbe() == null) {
            return a;
        }
        return b.lastProbe().isAfter(a.lastProbe()) ? b : a;
    }
}
