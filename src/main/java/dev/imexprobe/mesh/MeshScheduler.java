package dev.imexprobe.mesh;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.peer.PeerAddress;
import dev.imexprobe.peer.PeerCall;
import dev.imexprobe.peer.PeerDiscovery;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.probe.ContextGuard;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.ImexDomain;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Probes the domain every interval: push probes from each local GPU to each GPU of each peer (or of k peers
 * chosen by rendezvous hashing), a bounded number at once. The first round starts at a random point of the
 * first interval and later rounds are jittered, so agents that start together do not probe together. A peer
 * that cannot be reached is left alone for 1, 2, 4… rounds (up to the maximum backoff); its pairs stay failed. A
 * round waits one interval at most: a peer still being probed then is left to finish, and skipped until it has.
 */
public final class MeshScheduler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MeshScheduler.class);
    /** Re-ask a peer who it is every this many rounds: a restarted agent may have other GPUs. */
    private static final int IDENTIFY_EVERY = 10;
    /**
     * With a longer interval, while a peer does not answer, discovery is asked again this often between rounds, so a
     * peer that left is forgotten within this time, not at the next round (minutes later, past pairFailingFor, its
     * failed pairs fired pair alerts). The default interval's look-up rate, so no more load on DNS or the API.
     */
    static final Duration DEPARTURE_CHECK = Duration.ofSeconds(30);

    /** What the scheduler needs from the configuration. */
    public record Settings(Duration interval, double jitter, int subset, int concurrency, Duration maxBackoff,
                           Long sizeBytes, boolean writeback) {
    }

    /** What the scheduler asks of the prober: {@link Prober} in the agent, an in-JVM fake in tests. */
    interface PairProber {
        Prober.Identification identify(String target);

        PairResult probePair(Prober.Peer peer, GpuSelector.Gpu local, GpuSelector.Gpu remote, Direction direction,
                             Long sizeBytes, boolean writeback);

        PairResult unreachablePair(String target, Prober.Peer known, GpuSelector.Gpu local, GpuSelector.Gpu remote,
                                   PeerCall<?> call);

        static PairProber of(Prober p) {
            return new PairProber() {
                @Override
                public Prober.Identification identify(String target) {
                    return p.identify(target);
                }

                @Override
                public PairResult probePair(Prober.Peer peer, GpuSelector.Gpu local, GpuSelector.Gpu remote,
                                            Direction direction, Long sizeBytes, boolean writeback) {
                    return p.probePair(peer, local, remote, direction, sizeBytes, writeback);
                }

                @Override
                public PairResult unreachablePair(String target, Prober.Peer known, GpuSelector.Gpu local,
                                                  GpuSelector.Gpu remote, PeerCall<?> call) {
                    return p.unreachablePair(target, known, local, remote, call);
                }
            };
        }
    }

    private final Settings settings;
    private final PeerDiscovery discovery;
    private final PairProber prober;
    private final LocalAgent self;
    private final Runnable refreshNode;
    private final ProbeRecorder recorder;
    private final ScheduledExecutorService timer;
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore inFlight;
    private final Map<String, PeerTrack> tracks = new ConcurrentHashMap<>();
    private final Supplier<Double> random;
    private final LongSupplier nanoTime;
    private volatile long round;
    private volatile long nextRoundNanos;
    private volatile boolean closed;

    /** Per-peer memory: who it is, and when to try again. */
    static final class PeerTrack {
        volatile Prober.Peer peer;
        volatile long identifiedRound = -1;
        volatile int failures;
        volatile long nextAttemptRound;
        /** A pair with this peer failed at its last probe, though the peer answered: probed again the next round. */
        volatile boolean failedLast;
        /** The work of the last round that started one for this peer; a later round waits for it to finish. */
        volatile Future<?> running;

        boolean busy() {
            Future<?> f = running;
            return f != null && !f.isDone();
        }
    }

    public MeshScheduler(Settings settings, PeerDiscovery discovery, Prober prober, LocalAgent self,
                         Runnable refreshNode, ProbeRecorder recorder) {
        this(settings, discovery, PairProber.of(prober), self, refreshNode, recorder,
                () -> ThreadLocalRandom.current().nextDouble(), System::nanoTime,
                Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "mesh");
                    t.setDaemon(true);
                    return t;
                }));
    }

    /** For tests: the prober, the randomness, the clock of round durations and the timer are given. */
    MeshScheduler(Settings settings, PeerDiscovery discovery, PairProber prober, LocalAgent self, Runnable refreshNode,
                  ProbeRecorder recorder, Supplier<Double> random, LongSupplier nanoTime,
                  ScheduledExecutorService timer) {
        this.settings = settings;
        this.discovery = discovery;
        this.prober = prober;
        this.self = self;
        this.refreshNode = refreshNode;
        this.recorder = recorder;
        this.random = random;
        this.nanoTime = nanoTime;
        this.inFlight = new Semaphore(settings.concurrency());
        this.timer = timer;
    }

    /** Starts the rounds; the first begins at a random point of the first interval. */
    public void start() {
        long first = (long) (settings.interval().toMillis() * random.get());
        timer.schedule(this::roundAndReschedule, first, TimeUnit.MILLISECONDS);
    }

    private void roundAndReschedule() {
        long start = nanoTime.getAsLong();
        try {
            runRound();
        } catch (RuntimeException e) {
            log.error("mesh round {} failed; the next round runs as planned", round, e);
        }
        if (!closed) {
            long spent = (nanoTime.getAsLong() - start) / 1_000_000;
            double factor = 1 + settings.jitter() * (2 * random.get() - 1);
            long next = Math.max(0, (long) (settings.interval().toMillis() * factor) - spent);
            nextRoundNanos = nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(next);
            timer.schedule(this::roundAndReschedule, next, TimeUnit.MILLISECONDS);
            if (next > DEPARTURE_CHECK.toMillis()) {
                timer.schedule(this::departureCheck, DEPARTURE_CHECK.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Between two rounds of a long interval: while a peer does not answer, asks discovery again and forgets the
     * peers that left. Runs on the timer's thread, so never beside a round; again every {@link #DEPARTURE_CHECK}
     * until the next round is that close.
     */
    void departureCheck() {
        if (closed) {
            return;
        }
        try {
            if (tracks.values().stream().anyMatch(t -> t.failures > 0)) {
                Set<PeerAddress> peers = discovery.peers();
                if (!forgetDeparted(peers).isEmpty()) {
                    recorder.pairsForgotten();
                }
            }
        } catch (RuntimeException e) {
            log.warn("mesh: asking discovery between rounds failed; the next round asks again", e);
        }
        if (nextRoundNanos - nanoTime.getAsLong() > DEPARTURE_CHECK.toNanos()) {
            timer.schedule(this::departureCheck, DEPARTURE_CHECK.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Drops the peers that did not answer and that discovery no longer gives, with their pairs at once (unless another
     * address of the same agent is still discovered). Other departed peers wait for the round's end, which forgets
     * pairs neither probed nor kept for two rounds: their pairs did not fail, and a peer out of discovery for one look-up
     * only (a readiness blip) keeps its history. A peer whose work of an earlier round still runs keeps its pairs,
     * which that work records into. Returns the pairs forgotten.
     */
    private Set<PairKey> forgetDeparted(Set<PeerAddress> discovered) {
        Set<String> addresses = new HashSet<>();
        discovered.forEach(p -> addresses.add(p.hostPort()));
        Set<String> agentsStill = new HashSet<>();
        tracks.forEach((address, t) -> {
            Prober.Peer known = t.peer;
            if (addresses.contains(address) && known != null) {
                agentsStill.add(known.agentId());
            }
        });
        Set<PairKey> gone = new HashSet<>();
        List<GpuSelector.Gpu> locals = null;
        for (Map.Entry<String, PeerTrack> e : tracks.entrySet()) {
            PeerTrack t = e.getValue();
            if (addresses.contains(e.getKey()) || t.failures == 0) {
                continue;
            }
            tracks.remove(e.getKey());
            Prober.Peer known = t.peer;
            if (t.busy() || (known != null && agentsStill.contains(known.agentId()))) {
                continue;
            }
            locals = locals != null ? locals : localGpus();
            for (GpuSelector.Gpu local : locals) {
                if (known == null) {
                    gone.add(new PairKey(self.node(), local.uuid(), e.getKey(), PairKey.UNKNOWN_GPU));
                    continue;
                }
                for (GpuSelector.Gpu remote : known.gpus()) {
                    gone.add(new PairKey(self.node(), local.uuid(), known.node(), remote.uuid()));
                }
            }
        }
        gone.forEach(recorder.state()::forget);
        return gone;
    }

    /** One round: refresh the node, probe the chosen peers, forget departed ones. Public for tests and /v1/mesh. */
    public void runRound() {
        long r = ++round;
        recorder.state().roundStarted();
        refreshNode.run();
        List<PeerAddress> peers = new ArrayList<>(discovery.peers());
        recorder.state().peersKnown(peers.size());
        peers.sort(Comparator.comparing(PeerAddress::hostPort));
        List<PeerAddress> chosen = choose(peers, r);
        List<Map.Entry<PeerAddress, Future<?>>> tasks = new ArrayList<>();
        // The chosen hold one address per agent known before; an address identified this round as an agent another
        // one probes gives way (the first to claim it probes).
        Set<String> claimed = ConcurrentHashMap.newKeySet();
        for (PeerAddress peer : chosen) {
            PeerTrack track = tracks.computeIfAbsent(peer.hostPort(), k -> new PeerTrack());
            if (r < track.nextAttemptRound || track.busy()) {
                continue; // backing off, or still being probed by an earlier round that ran past its interval
            }
            tasks.add(started(peer, track, workers.submit(() -> probePeer(peer.hostPort(), track, r, claimed))));
        }
        if (settings.subset() > 0) {
            // Peers never identified and not chosen are only asked who they are (GET /v1/node, no probe): from the
            // next round on, the subset's choice knows their domains. Without this, k peers a round were learnt
            // and the own domain's share of the k stayed diluted for about peers / k rounds after a start.
            Set<PeerAddress> probed = new HashSet<>(chosen);
            for (PeerAddress peer : peers) {
                PeerTrack track = tracks.computeIfAbsent(peer.hostPort(), k -> new PeerTrack());
                if (track.peer == null && !probed.contains(peer) && r >= track.nextAttemptRound && !track.busy()) {
                    tasks.add(started(peer, track, workers.submit(() -> identifyOnly(peer.hostPort(), track, r))));
                }
            }
        }
        // The round waits one interval at most. A peer that answers each exchange just inside the peer timeout (or
        // has many GPUs) would otherwise hold every other peer's next probe for pairs × its answer time, and
        // ImexprobeProbesStale could fire on this agent. Such a peer's work goes on; rounds skip it until it ends.
        long deadline = System.nanoTime() + settings.interval().toNanos();
        List<String> late = new ArrayList<>();
        for (Map.Entry<PeerAddress, Future<?>> task : tasks) {
            try {
                task.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (TimeoutException e) {
                late.add(task.getKey().hostPort());
            } catch (Exception e) {
                log.warn("a mesh probe failed unexpectedly", e);
            }
        }
        if (!late.isEmpty()) {
            log.warn("mesh round {}: {} still being probed after one interval ({}); the round ends without them and "
                    + "later rounds skip them until that work ends (a peer slow to answer: see its /v1/mesh "
                    + "durations)", r, late, settings.interval());
        }
        tracks.keySet().retainAll(peers.stream().map(PeerAddress::hostPort).toList());
        keepDiscovered(peers);
        recorder.state().forgetUnseenForTwoRounds();
        recorder.cycleFinished();
    }

    private static Map.Entry<PeerAddress, Future<?>> started(PeerAddress peer, PeerTrack track, Future<?> work) {
        track.running = work;
        return Map.entry(peer, work);
    }

    /**
     * The round's peers: all of them, or with {@code imexprobe.mesh.subset=k} the k chosen by rendezvous hashing among
     * the peers that may share an IMEX domain with one of our GPUs (known to, or not identified yet). A peer known to
     * lie wholly in other domains has no pair that can work: among the k it would take a place and probe nothing, so
     * in a cluster of many domains the agent's own domain got about k / domains probes a round. Those peers (and our
     * own address under another name) are chosen apart, k of them at most, the same way: each visit keeps it
     * identified and its pairs shown as not probed (and offers them to the cross-domain sample). A peer backing off or
     * still busy from an earlier round is not drawn: chosen, it probed nothing and the round had one place fewer.
     */
    private List<PeerAddress> choose(List<PeerAddress> peers, long r) {
        List<PeerAddress> distinct = oneAddressPerAgent(peers);
        int k = settings.subset();
        if (k <= 0) {
            return distinct;
        }
        List<GpuSelector.Gpu> locals = localGpus();
        List<PeerAddress> near = new ArrayList<>();
        List<PeerAddress> apart = new ArrayList<>();
        for (PeerAddress p : distinct) {
            PeerTrack track = tracks.get(p.hostPort());
            if (track != null && (r < track.nextAttemptRound || track.busy())) {
                continue; // backing off, or still busy from a round before: its place goes to a peer this round probes
            }
            boolean known = track != null && track.peer != null;
            boolean nothingToProbe = known && (whollyApart(locals, track.peer.gpus()) || isSelf(track.peer));
            (nothingToProbe ? apart : near).add(p);
        }
        List<PeerAddress> chosen = new ArrayList<>(Rendezvous.pick(near, k, self.agentId(), r, PeerAddress::hostPort));
        // A peer whose pair failed at its last probe comes again the next round, k such at most beside the k: a pair
        // waits about peers / k rounds for its turn (18 minutes for 575 peers at k = 16 and 30 s), so one failed probe
        // stood that long and fired ImexprobePairImportFailing alone. Now the next round confirms or clears it.
        Set<PeerAddress> drawn = new HashSet<>(chosen);
        List<PeerAddress> failedLast = near.stream().filter(p -> !drawn.contains(p)).filter(p -> {
            PeerTrack t = tracks.get(p.hostPort());
            return t != null && t.failedLast;
        }).toList();
        chosen.addAll(Rendezvous.pick(failedLast, k, self.agentId(), r, PeerAddress::hostPort));
        chosen.addAll(Rendezvous.pick(apart, k, self.agentId(), r, PeerAddress::hostPort));
        return chosen;
    }

    /**
     * One address for each agent known before (a name and an IP in a static list, its A and AAAA records, two
     * sources all find one agent): probed once a round, and one place among a subset's k. An address whose last
     * attempt got an answer is preferred, so a broken address family costs one failed round, not a flapping pair.
     * Addresses not identified yet all stay.
     */
    private List<PeerAddress> oneAddressPerAgent(List<PeerAddress> addresses) {
        List<PeerAddress> ordered = new ArrayList<>(addresses);
        ordered.sort(Comparator.comparing(p -> {
            PeerTrack t = tracks.get(p.hostPort());
            return t != null && t.failures > 0;
        }));
        Set<String> agents = new HashSet<>();
        List<PeerAddress> out = new ArrayList<>(ordered.size());
        for (PeerAddress p : ordered) {
            PeerTrack t = tracks.get(p.hostPort());
            Prober.Peer known = t == null ? null : t.peer;
            if (known == null || isSelf(known) || agents.add(known.agentId())) {
                out.add(p);
            }
        }
        return out;
    }

    /** No pair of a local and a remote GPU in one IMEX domain (a GPU whose domain is unknown may share one). */
    private static boolean whollyApart(List<GpuSelector.Gpu> locals, List<GpuSelector.Gpu> remotes) {
        if (locals.isEmpty() || remotes.isEmpty()) {
            return false;
        }
        for (GpuSelector.Gpu local : locals) {
            for (GpuSelector.Gpu remote : remotes) {
                if (ImexDomain.same(local.domain(), remote.domain())) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Pairs of peers still in discovery are kept even in rounds that did not probe them (subsets, backoff):
     * only peers that left are forgotten.
     */
    private void keepDiscovered(List<PeerAddress> peers) {
        List<GpuSelector.Gpu> locals = localGpus();
        for (PeerAddress p : peers) {
            PeerTrack track = tracks.get(p.hostPort());
            if (track == null) {
                continue;
            }
            Prober.Peer known = track.peer;
            for (GpuSelector.Gpu local : locals) {
                if (known == null) {
                    recorder.state().keep(new PairKey(self.node(), local.uuid(), p.hostPort(), PairKey.UNKNOWN_GPU));
                    continue;
                }
                for (GpuSelector.Gpu remote : known.gpus()) {
                    recorder.state().keep(new PairKey(self.node(), local.uuid(), known.node(), remote.uuid()));
                }
            }
        }
    }

    private void probePeer(String target, PeerTrack track, long r, Set<String> claimed) {
        List<GpuSelector.Gpu> locals = localGpus();
        Prober.Peer peer = known(target, track, r, locals);
        if (peer == null) {
            return;
        }
        if (!claimed.add(peer.agentId())) {
            return; // an agent that another address of this round probes
        }
        if (show(peer, locals) != null) {
            // observer mode, here or there: no probe, so no context, no allocation and no pair to alert on
            track.failures = 0;
            track.nextAttemptRound = 0;
            return;
        }
        boolean anyAnswer = false;
        boolean anyProbed = false;
        boolean anyFailed = false;
        // The first exchange the peer did not answer at all (no connection, or no answer in time): its other pairs
        // are not tried this round, so a peer that stopped answering holds the round up for one timeout, not one
        // per pair (4 × 4 GPUs at the 10 s timeout were 160 s, and every healthy pair waited for the next round).
        PairResult unanswered = null;
        for (GpuSelector.Gpu local : locals) {
            for (GpuSelector.Gpu remote : peer.gpus()) {
                if (noContext(local, remote) != null) {
                    // compute mode, MIG or no fabric memory: no context is made on that GPU, so the pair is not
                    // probed (never failed); show() marked it so
                    continue;
                }
                if (!ImexDomain.same(local.domain(), remote.domain())) {
                    // cannot work by design: not probed, never a failure (and never an alert); now and then
                    // one such pair is sampled to check that it indeed cannot (CrossDomainSample)
                    PairKey key = new PairKey(self.node(), local.uuid(), peer.node(), remote.uuid());
                    if (unanswered == null && crossDomainSample.take(key)) {
                        PairResult sample = withSlot(() -> prober.probePair(peer, local, remote, Direction.PUSH,
                                settings.sizeBytes(), settings.writeback()));
                        if (sample != null) {
                            crossDomainSample.record(key, local.domain(), remote.domain(), sample);
                        }
                    }
                    recorder.state().notProbed(key, crossDomainSample.findingFor(key, local.domain(), remote.domain()));
                    continue;
                }
                anyProbed = true;
                if (unanswered != null) {
                    recorder.record(Prober.notTried(unanswered, local, remote));
                    continue;
                }
                PairResult result = withSlot(() -> prober.probePair(peer, local, remote, Direction.PUSH,
                        settings.sizeBytes(), settings.writeback()));
                if (result == null) {
                    return;
                }
                recorder.record(result);
                anyFailed |= !result.passed();
                if (Prober.unanswered(result)) {
                    unanswered = result;
                } else {
                    anyAnswer = true;
                }
            }
        }
        track.failedLast = anyAnswer && anyFailed;
        if (anyAnswer || !anyProbed) {
            track.failures = 0;
            track.nextAttemptRound = 0;
        } else {
            failed(track, r);
            track.identifiedRound = -1; // ask who it is next time: it may have been replaced
        }
    }

    /**
     * A peer not chosen this round, never identified before, is only asked who it is, and its pairs are shown as a
     * round that visits every peer shows them before its results. So the mesh holds every pair from the first round
     * on, and {@code imexprobe_pairs{state="unknown"}} counts those a subset has yet to reach, where before they were
     * missing from every count.
     */
    private void identifyOnly(String target, PeerTrack track, long r) {
        List<GpuSelector.Gpu> locals = localGpus();
        Prober.Peer peer = known(target, track, r, locals);
        if (peer != null) {
            show(peer, locals);
        }
    }

    /** The peer, identified (asked again when due) and its GPUs' domains learnt; null if it did not say or is us. */
    private Prober.Peer known(String target, PeerTrack track, long r, List<GpuSelector.Gpu> locals) {
        if (!identified(target, track, r, locals) || isSelf(track.peer)) {
            return null;
        }
        learnDomains(track.peer);
        return track.peer;
    }

    /**
     * Each pair with the peer as it stands before this round's results: not probed where no round would probe it
     * (observer mode, no context, another IMEX domain), unknown until its first result otherwise. Returns why no pair
     * with the peer is probed in observer mode, or null.
     */
    private Finding show(Prober.Peer peer, List<GpuSelector.Gpu> locals) {
        for (GpuSelector.Gpu local : locals) {
            for (GpuSelector.Gpu remote : peer.gpus()) {
                PairKey key = new PairKey(self.node(), local.uuid(), peer.node(), remote.uuid());
                Finding why = notProbedByDesign(peer, local, remote, key);
                if (why != null) {
                    recorder.state().notProbed(key, why);
                } else {
                    recorder.state().expect(key);
                }
            }
        }
        return observing(peer);
    }

    /**
     * Why no round probes the pair, whatever the peer does (observer mode here or there, no context on a GPU, another
     * IMEX domain), or null.
     */
    private Finding notProbedByDesign(Prober.Peer peer, GpuSelector.Gpu local, GpuSelector.Gpu remote, PairKey key) {
        Finding why = observing(peer);
        if (why == null) {
            why = noContext(local, remote);
        }
        if (why == null && !ImexDomain.same(local.domain(), remote.domain())) {
            why = crossDomainSample.findingFor(key, local.domain(), remote.domain());
        }
        return why;
    }

    /** Why no pair with this peer is probed in observer mode (here or there), or null. */
    private Finding observing(Prober.Peer peer) {
        return observer ? FindingCode.OBSERVER_MODE.finding(java.util.Map.of())
                : peer.observer() ? FindingCode.OBSERVER_TARGET.finding(java.util.Map.of("targetNode", peer.node()))
                : null;
    }

    /** Our own agent, reached under another address (a node IP in a static list, say): nothing to probe there. */
    private boolean isSelf(Prober.Peer peer) {
        return self.agentId().equals(peer.agentId());
    }

    private void learnDomains(Prober.Peer peer) {
        for (GpuSelector.Gpu remote : peer.gpus()) {
            recorder.state().learnDomain(remote.uuid(), remote.domain());
        }
    }

    /**
     * Why no context is made for the pair (compute mode, MIG or no fabric memory on either GPU), blaming that GPU's
     * side (the mesh pushes: local is the source), or null.
     */
    private static Finding noContext(GpuSelector.Gpu local, GpuSelector.Gpu remote) {
        return ContextGuard.inPair(Prober.noContext(local, remote),
                local.notProbed() != null ? Blame.SOURCE : Blame.TARGET);
    }

    /**
     * Asks the peer who it is when it was never identified or not for {@value #IDENTIFY_EVERY} rounds. False when it
     * did not say: its pairs are then recorded as unreachable (one per local GPU under its address while its GPUs are
     * unknown) and it backs off.
     */
    private boolean identified(String target, PeerTrack track, long r, List<GpuSelector.Gpu> locals) {
        if (track.peer != null && r - track.identifiedRound < IDENTIFY_EVERY) {
            return true;
        }
        Prober.Identification id = withSlot(() -> prober.identify(target));
        if (id == null) {
            return false;
        }
        if (!id.ok()) {
            failed(track, r);
            if (observer) {
                return false; // an observer measures nothing, so it has no failed pair to record either
            }
            List<GpuSelector.Gpu> remotes = track.peer != null ? track.peer.gpus() : Collections.singletonList(null);
            for (GpuSelector.Gpu local : locals) {
                for (GpuSelector.Gpu remote : remotes) {
                    // a pair no round would probe (an observer, a GPU without a context, another domain) stays not
                    // probed: an unreachable peer does not make a pair that cannot work by design a failure
                    if (remote != null && notProbedByDesign(track.peer, local, remote,
                            new PairKey(self.node(), local.uuid(), track.peer.node(), remote.uuid())) != null) {
                        continue;
                    }
                    recorder.record(prober.unreachablePair(target, track.peer, local, remote, id.failure()));
                }
            }
            return false;
        }
        track.peer = id.peer();
        track.identifiedRound = r;
        if (!target.equals(id.peer().node())) {
            // The pairs recorded under its address while it could not say who it is are superseded.
            for (GpuSelector.Gpu local : locals) {
                recorder.state().forget(new PairKey(self.node(), local.uuid(), target, PairKey.UNKNOWN_GPU));
            }
        }
        return true;
    }

    private void failed(PeerTrack track, long r) {
        track.failures++;
        long maxRounds = Math.max(1, settings.maxBackoff().toMillis() / Math.max(1, settings.interval().toMillis()));
        long wait = Math.min(maxRounds, 1L << Math.min(20, track.failures - 1));
        track.nextAttemptRound = r + wait;
    }

    private <T> T withSlot(Supplier<T> work) {
        try {
            inFlight.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        try {
            return work.get();
        } finally {
            inFlight.release();
        }
    }

    private List<GpuSelector.Gpu> localGpus() {
        List<GpuSelector.Gpu> out = new ArrayList<>();
        for (GpuDevice g : self.gpus()) {
            out.add(new GpuSelector.Gpu(g.index(), g.uuid(), g.imexDomain(), g.notProbed()));
            recorder.state().learnDomain(g.uuid(), g.imexDomain());
        }
        return out;
    }

    private volatile boolean observer;
    private volatile CrossDomainSample crossDomainSample = new CrossDomainSample(Duration.ZERO, Duration.ZERO, System::nanoTime);

    /** imexprobe.mesh.cross-domain-sample-interval: at most one pair across IMEX domains probed per interval. */
    public MeshScheduler crossDomainSample(CrossDomainSample sample) {
        this.crossDomainSample = sample;
        return this;
    }

    /**
     * imexprobe.channel.mode=observer: rounds refresh the node and discovery and ask peers who they are (GET
     * /v1/node, no driver call), but probe nothing: their pairs are not_probed (OBSERVER_MODE).
     */
    public MeshScheduler observer(boolean on) {
        this.observer = on;
        return this;
    }

    public boolean observer() {
        return observer;
    }

    public long round() {
        return round;
    }

    /** Peers currently known to discovery and how each is doing. */
    public Map<String, PeerTrack> tracks() {
        return Map.copyOf(tracks);
    }

    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        workers.shutdownNow();
        // An interrupted probe gives up at once (the driver thread releases what its call returns with); waiting
        // here lets one whose export was already made hand it to the registry before the registry closes.
        try {
            workers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
