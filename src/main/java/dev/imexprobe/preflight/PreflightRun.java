package dev.imexprobe.preflight;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.peer.PeerAddress;
import dev.imexprobe.peer.PeerCall;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.PeerDiscovery;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDeadline;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One preflight, all-to-all: wait until the expected instances answer, import from each of them (the agent's pull
 * probe: the other instance exports a fresh FABRIC buffer per pair through POST /v1/exports, this one imports,
 * maps, verifies and writes back, then the exporter checks the write-back and releases), publish the pairs, gather
 * everyone's pairs, and stay until nobody needs this instance's exports or answers any more.
 */
public final class PreflightRun {

    private static final Logger log = LoggerFactory.getLogger(PreflightRun.class);
    /** How often the instances look for each other; cheap calls, a handful of peers. */
    static final Duration POLL = Duration.ofMillis(500);

    private final PreflightState state;
    private final PeerDiscovery discovery;
    private final Prober prober;
    private final PeerClient client;
    private final NodeService node;
    private final JsonMapper json;

    PreflightRun(PreflightState state, PeerDiscovery discovery, Prober prober, PeerClient client, NodeService node,
                 JsonMapper json) {
        this.state = state;
        this.discovery = discovery;
        this.prober = prober;
        this.client = client;
        this.node = node;
        this.json = json;
    }

    /** This instance as the others see it: its hostname (the pod's name) and port, node and GPUs. */
    static Instance describeSelf(NodeService node, int port) {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "unknown";
            }
        }
        return new Instance(node.agentId(), host + ":" + port, node.node(), null,
                node.gpus().stream().map(GpuDevice::uuid).toList());
    }

    /** A peer instance found: how to reach it, who it says it is, what the prober needs of it. */
    private record Found(String address, Instance instance, Prober.Peer peer) {
    }

    /**
     * Runs the preflight. {@code started} is when the command started (System.nanoTime), so the deadline counts the
     * JVM's and Spring's start too.
     */
    public PreflightReport run(PreflightOptions options, long started) {
        long deadline = started + options.deadline().toNanos();
        Instance self = state.self();
        // Every call to a peer ends by the deadline of its phase, whatever the per-call timeout: a silent address
        // cannot hold a phase up by a timeout per call or per pair.
        Map<String, Found> peers = ProbeDeadline.within(deadline, () -> gather(options.expect() - 1, deadline));
        Map<String, Instance> instances = new LinkedHashMap<>();
        instances.put(self.id(), self);
        peers.values().forEach(f -> instances.put(f.instance().id(), f.instance().withAddress(f.address())));
        if (instances.size() < options.expect()) {
            log.warn("preflight: {} of {} instances at the deadline", instances.size(), options.expect());
            return PreflightVerdict.judge(options.expect(), self.id(), instances, List.of(), List.of(),
                    seconds(started));
        }
        long finishBy = System.nanoTime() + options.deadline().toNanos();
        state.probing();
        List<PreflightPair> mine = importFromEveryone(peers.values(), finishBy);
        state.done(mine);
        log.info("preflight: imported from {} instances, {} pairs, {} failed", peers.size(), mine.size(),
                mine.stream().filter(p -> !p.passed()).count());

        List<PreflightPair> all = new ArrayList<>(mine);
        List<String> silent = ProbeDeadline.within(finishBy, () -> {
            List<String> missing = collect(peers.values(), all, finishBy);
            state.collected();
            linger(peers.values(), finishBy);
            return missing;
        });
        return PreflightVerdict.judge(options.expect(), self.id(), instances, all, silent, seconds(started));
    }

    /** Waits until {@code wanted} other instances answer GET /v1/preflight and GET /v1/node, or the deadline. */
    private Map<String, Found> gather(int wanted, long deadline) {
        Map<String, Found> found = new LinkedHashMap<>();
        String selfId = state.self().id();
        while (true) {
            for (PeerAddress a : discovery.peers()) {
                String address = a.hostPort();
                if (found.values().stream().anyMatch(f -> f.address().equals(address))) {
                    continue;
                }
                PreflightStatus status = status(address);
                if (status == null || status.instance() == null || selfId.equals(status.instance().id())
                        || found.containsKey(status.instance().id())) {
                    continue; // not (yet) a preflight instance, this one itself, or one already found elsewhere
                }
                Prober.Identification id = prober.identify(address);
                if (id.ok()) {
                    found.put(status.instance().id(), new Found(address, status.instance(), id.peer()));
                    log.info("preflight: found {} at {} ({} of {} others)", status.instance().name(), address,
                            found.size(), wanted);
                }
            }
            if (found.size() >= wanted || System.nanoTime() > deadline) {
                return found;
            }
            sleep();
        }
    }

    /**
     * Every local GPU imports from every GPU of every other instance, one thread per instance, by {@code finishBy}:
     * pairs the deadline leaves no time for are timeouts, never started, and once an instance leaves an exchange
     * unanswered its other pairs are not tried but carry that failure.
     */
    private List<PreflightPair> importFromEveryone(java.util.Collection<Found> peers, long finishBy) {
        List<GpuSelector.Gpu> local = node.gpus().stream().map(g -> new GpuSelector.Gpu(g.index(), g.uuid(),
                g.imexDomain(), g.notProbed())).toList();
        String selfId = state.self().id();
        List<PreflightPair> pairs = Collections.synchronizedList(new ArrayList<>());
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> work = new ArrayList<>();
            for (Found f : peers) {
                work.add(pool.submit(() -> ProbeDeadline.within(finishBy, () -> {
                    PairResult unanswered = null;
                    for (GpuSelector.Gpu theirs : f.peer().gpus()) {
                        for (GpuSelector.Gpu ours : local) {
                            PairResult r = unanswered != null ? Prober.notTried(unanswered, ours, theirs)
                                    : ProbeDeadline.past() ? prober.notStarted(Direction.PULL, f.peer(), ours, theirs)
                                    : prober.probePair(f.peer(), ours, theirs, Direction.PULL, null, true);
                            if (unanswered == null && Prober.unanswered(r)) {
                                unanswered = r;
                            }
                            pairs.add(new PreflightPair(f.instance().id(), selfId, r));
                        }
                    }
                    return null;
                })));
            }
            for (Future<?> w : work) {
                try {
                    w.get();
                } catch (Exception e) {
                    throw new IllegalStateException("a preflight exchange failed unexpectedly", e);
                }
            }
        }
        return List.copyOf(pairs);
    }

    /**
     * Adds every other instance's pairs to {@code all} as each reports done; returns the names of those whose pairs
     * never came before {@code finishBy}.
     */
    private List<String> collect(java.util.Collection<Found> peers, List<PreflightPair> all, long finishBy) {
        Map<String, Found> waiting = new LinkedHashMap<>();
        peers.forEach(f -> waiting.put(f.instance().id(), f));
        while (!waiting.isEmpty() && System.nanoTime() < finishBy) {
            waiting.values().removeIf(f -> {
                PreflightStatus s = status(f.address());
                if (s != null && s.phase() != null && s.phase().done() && s.pairs() != null) {
                    all.addAll(s.pairs());
                    return true;
                }
                return false;
            });
            if (!waiting.isEmpty()) {
                sleep();
            }
        }
        return waiting.values().stream().map(f -> f.instance().name()).toList();
    }

    /**
     * Stays until every other instance has collected (or is gone, or the time is up): until then it may still be
     * importing from this one, or reading this one's pairs.
     */
    private void linger(java.util.Collection<Found> peers, long finishBy) {
        List<Found> waiting = new ArrayList<>(peers);
        while (!waiting.isEmpty() && System.nanoTime() < finishBy) {
            waiting.removeIf(f -> {
                PeerCall<JsonNode> call = client.preflight(f.address());
                if (call.kind() == PeerCall.Kind.UNREACHABLE) {
                    return true; // it has exited: it needs nothing of this one any more
                }
                PreflightStatus s = parse(call);
                return s != null && s.phase() == PreflightStatus.Phase.COLLECTED;
            });
            if (!waiting.isEmpty()) {
                sleep();
            }
        }
    }

    private PreflightStatus status(String address) {
        return parse(client.preflight(address));
    }

    private PreflightStatus parse(PeerCall<JsonNode> call) {
        if (!call.ok()) {
            return null;
        }
        try {
            return json.treeToValue(call.value(), PreflightStatus.class);
        } catch (JacksonException | IllegalArgumentException e) {
            log.debug("preflight: an unusable /v1/preflight answer: {}", e.getMessage());
            return null;
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("preflight interrupted", e);
        }
    }

    private static double seconds(long started) {
        return (System.nanoTime() - started) / 1e9;
    }
}
