package dev.imexprobe.mesh;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.peer.DiscoveryStatus;
import dev.imexprobe.peer.PeerAddress;
import dev.imexprobe.peer.PeerCall;
import dev.imexprobe.peer.PeerDiscovery;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.ProbeResults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduler driven round by round through {@link MeshScheduler#runRound()}, with an in-JVM prober, a
 * discovery the test edits, a clock the test moves and a timer that only records what it was asked to schedule.
 */
class MeshSchedulerTest {

    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
    private static final Duration INTERVAL = Duration.ofSeconds(1);
    private static final String SELF_GPU = "GPU-self-0";

    private final MutableClock clock = new MutableClock(T0);
    private final MeshState state = new MeshState(clock);
    private final ProbeRecorder recorder = new ProbeRecorder(state);
    private final FakeDiscovery discovery = new FakeDiscovery();
    private final FakeProber prober = new FakeProber();
    private final RecordingTimer timer = new RecordingTimer();
    private final AtomicInteger refreshes = new AtomicInteger();
    private final List<MeshScheduler> schedulers = new ArrayList<>();

    @AfterEach
    void close() {
        schedulers.forEach(MeshScheduler::close);
    }

    private MeshScheduler scheduler(int subset, int concurrency, Duration maxBackoff, Supplier<Double> random,
                                    AtomicLong nanos, List<String> localGpus) {
        return scheduler(subset, concurrency, maxBackoff, random, nanos, new FakeSelf(localGpus));
    }

    private MeshScheduler scheduler(int subset, int concurrency, Duration maxBackoff, Supplier<Double> random,
                                    AtomicLong nanos, LocalAgent self) {
        MeshScheduler.Settings settings = new MeshScheduler.Settings(INTERVAL, 0.2, subset, concurrency, maxBackoff,
                null, true);
        MeshScheduler s = new MeshScheduler(settings, discovery, prober, self, refreshes::incrementAndGet, recorder,
                random, nanos::get, timer);
        schedulers.add(s);
        return s;
    }

    private MeshScheduler scheduler() {
        return scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
    }

    /** One round, then the clock moves one interval on. */
    private void round(MeshScheduler s) {
        s.runRound();
        clock.advance(INTERVAL);
    }

    // ---- start and jitter ---------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(doubles = {0.0, 0.13, 0.5, 0.999})
    void theFirstRoundStartsAtARandomPointOfTheFirstInterval(double u) {
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> u, new AtomicLong(), List.of(SELF_GPU));

        s.start();

        assertThat(timer.delays).containsExactly((long) (1000 * u));
        assertThat(timer.delays.getFirst()).isBetween(0L, 999L);
        assertThat(prober.calls).as("nothing is probed before the first round's time").isEmpty();
        assertThat(s.round()).isZero();
    }

    @Test
    void agentsStartedTogetherSpreadTheirFirstRounds() {
        Iterator<Double> draws = List.of(0.05, 0.42, 0.91).iterator();
        for (int i = 0; i < 3; i++) {
            double u = draws.next();
            scheduler(0, 4, Duration.ofSeconds(8), () -> u, new AtomicLong(), List.of(SELF_GPU)).start();
        }
        assertThat(timer.delays).containsExactly(50L, 420L, 910L);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.0, 0.25, 0.5, 0.75, 0.99999})
    void laterRoundsFollowAfterTheIntervalJitteredWithinItsBounds(double u) {
        Iterator<Double> draws = List.of(0.5, u).iterator();
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), draws::next, new AtomicLong(), List.of(SELF_GPU));
        s.start();

        timer.runLast();

        assertThat(s.round()).isEqualTo(1);
        assertThat(timer.delays).hasSize(2);
        long next = timer.delays.getLast();
        assertThat(next).isEqualTo((long) (1000 * (1 + 0.2 * (2 * u - 1))));
        assertThat(next).isBetween(800L, 1200L);
    }

    @Test
    void theTimeARoundTookIsTakenOffTheWait() {
        AtomicLong nanos = new AtomicLong();
        prober.onProbe = () -> nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(300));
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, nanos, List.of(SELF_GPU));
        s.start();

        timer.runLast();

        assertThat(timer.delays.getLast()).isEqualTo(700L);
    }

    @Test
    void aRoundLongerThanTheIntervalIsFollowedAtOnce() {
        AtomicLong nanos = new AtomicLong();
        prober.onProbe = () -> nanos.addAndGet(TimeUnit.SECONDS.toNanos(3));
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, nanos, List.of(SELF_GPU));
        s.start();

        timer.runLast();

        assertThat(timer.delays.getLast()).isZero();
    }

    @Test
    void aRoundThatThrowsDoesNotStopTheRounds() {
        discovery.fail = true;
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        s.start();

        timer.runLast();

        assertThat(timer.delays).hasSize(2);
    }

    // ---- what a round does --------------------------------------------------------------------------------

    @Test
    void aRoundPushesFromEveryLocalGpuToEveryGpuOfEveryPeer() {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0", "GPU-b1");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(),
                List.of("GPU-self-0", "GPU-self-1"));

        s.runRound();

        assertThat(prober.probes()).containsExactlyInAnyOrder(
                "GPU-self-0>GPU-b0", "GPU-self-0>GPU-b1", "GPU-self-1>GPU-b0", "GPU-self-1>GPU-b1",
                "GPU-self-0>GPU-c0", "GPU-self-1>GPU-c0");
        assertThat(prober.directions).containsOnly(Direction.PUSH);
        assertThat(state.snapshot()).hasSize(6).allMatch(p -> p.state() == PairState.State.OK);
        assertThat(refreshes).hasValue(1);
        assertThat(state.lastCycle()).isEqualTo(T0);
    }

    @Test
    void aNewPeerIsUnknownUntilItsFirstResult() {
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler();
        round(s);

        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        PairKey bc = new PairKey("node-self", SELF_GPU, "node-c", "GPU-c0");
        assertThat(state.snapshot()).extracting(PairState::key).doesNotContain(bc);
        Map<PairKey, PairState.State> duringProbe = new ConcurrentHashMap<>();
        prober.onProbeOf = key -> state.snapshot().stream().filter(p -> p.key().equals(key))
                .forEach(p -> duringProbe.put(key, p.state()));
        round(s);

        assertThat(duringProbe).containsEntry(bc, PairState.State.UNKNOWN);
        assertThat(stateOf(bc)).isEqualTo(PairState.State.OK);
    }

    @Test
    void selfIsSkippedEvenUnderAnotherAddress() {
        discovery.set("10.0.0.9:8080", "10.0.0.2:8080");
        prober.ourselves("10.0.0.9:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler();

        round(s);
        round(s);

        assertThat(prober.probes()).containsExactly("GPU-self-0>GPU-b0", "GPU-self-0>GPU-b0");
        assertThat(state.snapshot()).extracting(p -> p.targetNode()).containsOnly("node-b");
    }

    /**
     * One agent under several addresses (a name and an IP in a static list, its A and AAAA records): probed once a
     * round, from the first round on, whichever of its addresses are listed and in whatever order.
     */
    @Test
    void anAgentUnderSeveralAddressesIsProbedOnceARound() {
        Random random = new Random();
        List<String> addresses = new ArrayList<>(List.of("10.0.0.2:8080", "node-b:8080", "[fd00::2]:8080"));
        Collections.shuffle(addresses, random);
        List<String> listed = addresses.subList(0, 2 + random.nextInt(2));
        listed.forEach(a -> prober.agent(a, "node-b", "GPU-b0"));
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        List<String> all = new ArrayList<>(listed);
        all.add("10.0.0.3:8080");
        discovery.set(all.toArray(String[]::new));
        MeshScheduler s = scheduler();
        int rounds = 3 + random.nextInt(3);
        for (int i = 0; i < rounds; i++) {
            round(s);
        }

        assertThat(prober.probes()).as("addresses %s", listed).filteredOn(p -> p.endsWith(">GPU-b0")).hasSize(rounds);
        assertThat(prober.probes()).filteredOn(p -> p.endsWith(">GPU-c0")).hasSize(rounds);
        assertThat(state.snapshot()).hasSize(2).allMatch(p -> p.state() == PairState.State.OK);
    }

    /**
     * With subsets, an agent under two addresses takes one place in the draw, not two: with k = 1 and two agents,
     * each is probed in about half the rounds (it was two thirds for the one with two addresses), one probe a round.
     */
    @Test
    void withSubsetsAnAgentUnderTwoAddressesHasOnePlaceAmongTheK() {
        discovery.set("10.0.0.2:8080", "[fd00::2]:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        prober.agent("[fd00::2]:8080", "node-b", "GPU-b0");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        MeshScheduler s = scheduler(1, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        round(s); // the first round identifies every address
        int rounds = 400;
        int before = prober.probes().size();
        for (int i = 0; i < rounds; i++) {
            round(s);
        }

        List<String> probes = prober.probes().subList(before, prober.probes().size());
        assertThat(probes).hasSize(rounds);
        long toC = probes.stream().filter(p -> p.endsWith(">GPU-c0")).count();
        // a fair draw: 0.4..0.6 is four standard deviations of binomial(400, 1/2) either way; the old one gave c 1/3
        assertThat(toC / (double) rounds).isBetween(0.4, 0.6);
    }

    /** When the address an agent was probed through stops answering, the next round goes through another one. */
    @Test
    void anAgentUnderTwoAddressesIsProbedThroughTheOneThatAnswers() {
        discovery.set("10.0.0.2:8080", "[fd00::2]:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        prober.agent("[fd00::2]:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler();
        round(s);
        List<String> before = List.copyOf(prober.probes());
        prober.down("10.0.0.2:8080"); // say, IPv4 between the nodes breaks while IPv6 works
        PairKey b = new PairKey("node-self", SELF_GPU, "node-b", "GPU-b0");
        List<PairState.State> after = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            round(s);
            after.add(stateOf(b));
        }

        assertThat(before).hasSize(1);
        assertThat(prober.probeRounds).as("one probe a round").containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        // the first round after the break went through the broken address; every later one through the other
        assertThat(after.getFirst()).isEqualTo(PairState.State.FAILED);
        assertThat(after.subList(1, 6)).containsOnly(PairState.State.OK);
    }

    @Test
    void concurrentProbesAreBounded() {
        List<String> addresses = new ArrayList<>();
        for (int i = 2; i < 10; i++) {
            addresses.add("10.0.0." + i + ":8080");
            prober.agent("10.0.0." + i + ":8080", "node-" + i, "GPU-" + i);
        }
        discovery.set(addresses.toArray(String[]::new));
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        prober.around = () -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            try {
                Thread.sleep(20); // hold the slot so that an unbounded scheduler would overlap
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            inFlight.decrementAndGet();
        };
        MeshScheduler s = scheduler(0, 2, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));

        s.runRound();

        assertThat(most.get()).isBetween(1, 2);
        assertThat(state.snapshot()).hasSize(8).allMatch(p -> p.state() == PairState.State.OK);
    }

    // ---- unreachable peers ----------------------------------------------------------------------------------

    @Test
    void anUnreachablePeerIsTriedAgainAfter1_2_4RoundsUpToTheMaximumBackoff() {
        discovery.set("10.0.0.3:8080");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));

        for (int r = 0; r < 48; r++) {
            round(s);
        }

        assertThat(prober.identifyRounds("10.0.0.3:8080"))
                .containsExactly(1L, 2L, 4L, 8L, 16L, 24L, 32L, 40L, 48L);
    }

    @Test
    void theBackoffEndsWhenThePeerAnswers() {
        discovery.set("10.0.0.3:8080");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        for (int r = 0; r < 8; r++) {
            round(s); // attempts in rounds 1, 2, 4, 8
        }
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        for (int r = 0; r < 8; r++) {
            round(s); // 9..15 skipped, 16 finds it
        }
        round(s);
        round(s);

        assertThat(prober.probeRounds).containsExactly(16L, 17L, 18L);
    }

    @Test
    void aPeerDownFromTheStartShowsAsAFailedPairUnderItsAddress() {
        discovery.set("10.0.0.3:8080");
        MeshScheduler s = scheduler();

        round(s);

        PairKey key = new PairKey("node-self", SELF_GPU, "10.0.0.3:8080", PairKey.UNKNOWN_GPU);
        assertThat(state.snapshot()).singleElement().satisfies(p -> {
            assertThat(p.key()).isEqualTo(key);
            assertThat(p.state()).isEqualTo(PairState.State.FAILED);
            assertThat(p.stage()).isEqualTo("transfer");
            assertThat(p.finding().code()).isEqualTo("PEER_UNREACHABLE");
        });
    }

    @Test
    void onceThatPeerAnswersNoPairRemainsUnderItsAddress() {
        discovery.set("10.0.0.3:8080");
        MeshScheduler s = scheduler();
        round(s);
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");

        round(s);

        assertThat(state.snapshot()).singleElement().satisfies(p -> {
            assertThat(p.key()).isEqualTo(new PairKey("node-self", SELF_GPU, "node-c", "GPU-c0"));
            assertThat(p.state()).isEqualTo(PairState.State.OK);
        });
    }

    @Test
    void aKnownPeerThatDiesFailsUnderItsOwnNameAndRecovers() {
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler();
        round(s);
        PairKey key = new PairKey("node-self", SELF_GPU, "node-b", "GPU-b0");
        Instant firstSuccess = state.snapshot().getFirst().lastSuccess();

        prober.down("10.0.0.2:8080");
        round(s);
        round(s);

        assertThat(state.snapshot()).singleElement().satisfies(p -> {
            assertThat(p.key()).isEqualTo(key);
            assertThat(p.state()).isEqualTo(PairState.State.FAILED);
            assertThat(p.finding().code()).isEqualTo("PEER_UNREACHABLE");
            assertThat(p.lastSuccess()).isEqualTo(firstSuccess);
        });

        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        for (int r = 0; r < 4; r++) {
            round(s);
        }
        assertThat(stateOf(key)).isEqualTo(PairState.State.OK);
    }

    @Test
    void aPeerThatStopsAnsweringCostsOneExchangeARoundNotOnePerPair() {
        java.util.Random rnd = new java.util.Random();
        long seed = rnd.nextLong();
        rnd.setSeed(seed);
        List<String> locals = new ArrayList<>();
        for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) {
            locals.add("GPU-self-" + i);
        }
        String[] mute = new String[2 + rnd.nextInt(3)]; // two or more pairs, so that some are not tried
        for (int i = 0; i < mute.length; i++) {
            mute[i] = "GPU-b" + i;
        }
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", mute);
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0", "GPU-c1");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), locals);
        String why = "seed " + seed + ", " + locals.size() + " local GPUs, " + mute.length + " on the silent peer";
        round(s); // node-b identified and probed while it answers
        assertThat(state.snapshot()).as(why).allSatisfy(p -> assertThat(p.state()).isEqualTo(PairState.State.OK));

        prober.calls.clear();
        prober.silent.add("10.0.0.2:8080"); // still says who it is (cached anyway), answers no exchange
        round(s);

        List<String> intoB = prober.probes().stream().filter(c -> c.contains(">GPU-b")).toList();
        assertThat(intoB).as("one exchange tried with the silent peer: %s", why).hasSize(1);
        assertThat(prober.probes().stream().filter(c -> c.contains(">GPU-c"))).as("the other peer: %s", why)
                .hasSize(2 * locals.size());
        List<PairState> b = state.snapshot().stream().filter(p -> p.targetNode().equals("node-b")).toList();
        assertThat(b).as(why).hasSize(locals.size() * mute.length).allSatisfy(p -> {
            assertThat(p.state()).isEqualTo(PairState.State.FAILED);
            assertThat(p.finding().code()).isEqualTo("PEER_UNREACHABLE");
            assertThat(p.finding().evidence()).containsEntry("peer", "10.0.0.2:8080");
        });
        assertThat(b.stream().filter(p -> String.valueOf(p.finding().evidence().get("detail"))
                .startsWith("not tried: the target did not answer the exchange of ")))
                .as("every pair but the one tried says why it was not: %s", why).hasSize(b.size() - 1);
        assertThat(state.snapshot().stream().filter(p -> p.targetNode().equals("node-c")))
                .allSatisfy(p -> assertThat(p.state()).isEqualTo(PairState.State.OK));
    }

    @Test
    void aPeerSlowToAnswerDoesNotHoldTheRoundPastItsIntervalAndIsNotStartedTwice() throws Exception {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0", "GPU-b1");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        MeshScheduler s = scheduler();
        round(s);
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        prober.onProbeOf = key -> {
            if (key.targetNode().equals("node-b")) {
                try {
                    answer.await(); // a peer that takes its time over every exchange, within the peer timeout
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        java.util.concurrent.ExecutorService caller = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            prober.calls.clear();
            Instant cycleBefore = state.lastCycle();
            caller.submit(() -> round(s)).get(5, TimeUnit.SECONDS); // one interval is 1 s
            assertThat(state.lastCycle()).as("the round ended").isAfter(cycleBefore);
            caller.submit(() -> round(s)).get(5, TimeUnit.SECONDS);

            assertThat(prober.probes().stream().filter(c -> c.contains(">GPU-c0")))
                    .as("the peer that answers was probed in both rounds").hasSize(2);
            assertThat(prober.probes().stream().filter(c -> c.contains(">GPU-b")))
                    .as("the slow peer's exchange of the first round is not started again").hasSize(1);
            answer.countDown();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (s.tracks().get("10.0.0.2:8080").busy() && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertThat(prober.probes().stream().filter(c -> c.contains(">GPU-b")))
                    .as("its work went on to its last pair").hasSize(2);
            caller.submit(() -> round(s)).get(5, TimeUnit.SECONDS);
            assertThat(prober.probes().stream().filter(c -> c.contains(">GPU-b")))
                    .as("once done, the next round probes it again").hasSize(4);
            assertThat(state.snapshot()).hasSize(3).allMatch(p -> p.state() == PairState.State.OK);
        } finally {
            answer.countDown();
            caller.shutdownNow();
        }
    }

    @Test
    void pairsThatCannotWorkByDesignStayNotProbedWhileTheirPeerIsDown() {
        String ours = "fabric:cluster/1";
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.4:8080");
        prober.agentIn(ours, "10.0.0.2:8080", "node-b", "GPU-b0");
        prober.agentIn("fabric:cluster/2", "10.0.0.3:8080", "node-c", "GPU-c0", "GPU-c1");
        prober.live.put("10.0.0.4:8080", new Prober.Peer("10.0.0.4:8080", "node-d", "agent-node-d",
                List.of(new GpuSelector.Gpu(0, "GPU-d0", ours)), "observer"));
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(2), () -> 0.5, new AtomicLong(),
                new FakeSelf(List.of(SELF_GPU, "GPU-self-1"), ours));
        round(s);

        prober.down("10.0.0.2:8080");
        prober.down("10.0.0.3:8080");
        prober.down("10.0.0.4:8080");
        for (int r = 0; r < 12; r++) { // past the tenth round, when each peer is asked again who it is
            round(s);
        }

        assertThat(prober.identifyRounds("10.0.0.3:8080")).as("the peer apart was asked again").hasSizeGreaterThan(1);
        assertThat(prober.identifyRounds("10.0.0.4:8080")).as("the observer was asked again").hasSizeGreaterThan(1);
        Map<String, List<PairState>> byNode = new java.util.HashMap<>();
        state.snapshot().forEach(p -> byNode.computeIfAbsent(p.targetNode(), n -> new ArrayList<>()).add(p));
        assertThat(byNode.get("node-b")).hasSize(2).allSatisfy(p -> {
            assertThat(p.state()).isEqualTo(PairState.State.FAILED);
            assertThat(p.finding().code()).isEqualTo("PEER_UNREACHABLE");
        });
        assertThat(byNode.get("node-c")).hasSize(4).allSatisfy(p -> {
            assertThat(p.state()).isEqualTo(PairState.State.NOT_PROBED);
            assertThat(p.finding().code()).isEqualTo("DIFFERENT_IMEX_DOMAIN");
        });
        assertThat(byNode.get("node-d")).hasSize(2).allSatisfy(p -> {
            assertThat(p.state()).isEqualTo(PairState.State.NOT_PROBED);
            assertThat(p.finding().code()).isEqualTo("OBSERVER_TARGET");
        });
    }

    // ---- departed peers -----------------------------------------------------------------------------------

    @Test
    void aPeerThatLeftDiscoveryIsForgottenAtTheEndOfTheSecondRoundWithoutIt() {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        // a long backoff and a failed pair: neither keeps the departed peer's pairs (they fired pair alerts)
        MeshScheduler s = scheduler(0, 4, Duration.ofMinutes(5), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        prober.silent.add("10.0.0.3:8080");
        round(s);
        assertThat(stateOf(new PairKey("node-self", SELF_GPU, "node-c", "GPU-c0"))).isEqualTo(PairState.State.FAILED);

        discovery.set("10.0.0.2:8080");
        round(s);
        assertThat(s.tracks()).containsOnlyKeys("10.0.0.2:8080");
        assertThat(state.snapshot()).as("one round without it").extracting(PairState::targetNode)
                .containsExactlyInAnyOrder("node-b", "node-c");
        round(s);

        assertThat(state.snapshot()).extracting(PairState::targetNode).containsExactly("node-b");
    }

    @Test
    void withALongIntervalAPeerThatStoppedAnsweringAndLeftIsForgottenWithinThirtySecondsNotAtTheNextRound() {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.4:8080", "10.0.0.5:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0", "GPU-c1");
        prober.agent("10.0.0.5:8080", "node-d", "GPU-d0");
        AtomicLong nanos = new AtomicLong();
        MeshScheduler s = longIntervalScheduler(nanos);
        List<String> heard = new CopyOnWriteArrayList<>();
        recorder.addListener(new ProbeRecorder.Listener() {
            @Override
            public void onResult(PairResult result) {
            }

            @Override
            public void onCycleFinished() {
                heard.add("round");
            }

            @Override
            public void onPairsForgotten() {
                heard.add("forgotten: " + state.snapshot().size());
            }
        });
        s.start();
        prober.silent.add("10.0.0.3:8080"); // node-c says who it is, then answers no exchange: its pod is going
        timer.runLast(); // round 1, which schedules round 2 in 10 minutes and a check of discovery in 30 s
        assertThat(timer.delays).as("first round, next round, the check")
                .containsExactly(timer.delays.getFirst(), Duration.ofMinutes(10).toMillis(), 30_000L);
        assertThat(state.snapshot()).extracting(PairState::targetNode)
                .containsExactlyInAnyOrder("node-b", "node-c", "node-c", "10.0.0.4:8080", "node-d");
        Instant cycle = state.lastCycle();
        int lookUps = discovery.lookUps.get();

        discovery.set("10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.4:8080", "10.0.0.5:8080");
        nanos.set(TimeUnit.SECONDS.toNanos(30));
        timer.runLast(); // still discovered: nothing forgotten; checks again in 30 s
        discovery.set("10.0.0.2:8080");
        nanos.set(TimeUnit.SECONDS.toNanos(60));
        timer.runLast();

        assertThat(discovery.lookUps.get() - lookUps).as("one look-up per check").isEqualTo(2);
        // node-d left too, but its pair passed: it waits for the rounds (a readiness blip keeps its history)
        assertThat(state.snapshot()).extracting(PairState::targetNode).containsExactlyInAnyOrder("node-b", "node-d");
        assertThat(s.tracks()).containsOnlyKeys("10.0.0.2:8080", "10.0.0.5:8080");
        assertThat(heard).as("the metrics refreshed, no round counted").containsExactly("round", "forgotten: 2");
        assertThat(state.lastCycle()).isEqualTo(cycle);
        assertThat(timer.delays).as("each check schedules the next while the round is more than 30 s away")
                .endsWith(30_000L, 30_000L, 30_000L);
    }

    @Test
    void withALongIntervalDiscoveryIsNotAskedBetweenRoundsWhileEveryPeerAnswersNorInTheLastThirtySeconds() {
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        AtomicLong nanos = new AtomicLong();
        MeshScheduler s = longIntervalScheduler(nanos);
        s.start();
        timer.runLast();
        int lookUps = discovery.lookUps.get();
        int scheduled = timer.delays.size();

        nanos.set(TimeUnit.SECONDS.toNanos(30));
        timer.runLast();
        assertThat(discovery.lookUps.get()).as("every peer answered: no look-up").isEqualTo(lookUps);
        assertThat(timer.delays).hasSize(scheduled + 1);

        prober.down("10.0.0.2:8080");
        nanos.set(Duration.ofMinutes(10).minusSeconds(29).toNanos()); // 29 s before round 2
        s.runRound(); // as if round 2 ran early: node-b does not answer now
        int afterRound = discovery.lookUps.get();
        timer.runLast();
        assertThat(discovery.lookUps.get()).as("node-b did not answer: a look-up").isEqualTo(afterRound + 1);
        assertThat(timer.delays).as("the next round is under 30 s away: no further check").hasSize(scheduled + 1);
    }

    private MeshScheduler longIntervalScheduler(AtomicLong nanos) {
        MeshScheduler.Settings settings = new MeshScheduler.Settings(Duration.ofMinutes(10), 0.2, 0, 4,
                Duration.ofMinutes(5), null, true);
        MeshScheduler s = new MeshScheduler(settings, discovery, prober, new FakeSelf(List.of(SELF_GPU)),
                refreshes::incrementAndGet, recorder, () -> 0.5, nanos::get, timer);
        schedulers.add(s);
        return s;
    }

    @Test
    void anOnDemandPairNoRoundProbesIsForgottenAfterTwoRoundsOneTheMeshProbesIsNot() {
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler();
        s.runRound();
        // after that round, before the next: a pull from a node the mesh does not probe, and a push into a pair the
        // mesh probes, both failed
        recorder.record(ProbeResults.unreachable("node-x", "GPU-x0", "10.0.0.9:8080", "node-self", SELF_GPU));
        recorder.record(ProbeResults.unreachable("node-self", SELF_GPU, "10.0.0.2:8080", "node-b", "GPU-b0"));
        clock.advance(INTERVAL);
        round(s);
        assertThat(state.snapshot()).extracting(PairState::sourceNode).contains("node-x");
        round(s);

        assertThat(state.snapshot()).extracting(PairState::key)
                .containsExactly(new PairKey("node-self", SELF_GPU, "node-b", "GPU-b0"));
        assertThat(stateOf(new PairKey("node-self", SELF_GPU, "node-b", "GPU-b0"))).isEqualTo(PairState.State.OK);
    }

    @Test
    void listenersHearOfTheRoundsEndAfterDepartedPairsAreForgotten() {
        discovery.set("10.0.0.2:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        MeshScheduler s = scheduler(0, 4, Duration.ofSeconds(1), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        List<Integer> pairsAtRoundEnd = new CopyOnWriteArrayList<>();
        recorder.addListener(new ProbeRecorder.Listener() {
            @Override
            public void onResult(PairResult result) {
            }

            @Override
            public void onCycleFinished() {
                pairsAtRoundEnd.add(state.snapshot().size());
            }
        });
        round(s);
        discovery.set();
        for (int r = 0; r < 7; r++) {
            round(s);
        }

        assertThat(pairsAtRoundEnd).containsExactly(1, 1, 0, 0, 0, 0, 0, 0);
        assertThat(state.lastCycle()).isEqualTo(T0.plusSeconds(7));
    }

    @Test
    void withSubsetsAPeerStillDiscoveredIsNeverForgottenBetweenItsTurns() {
        List<String> addresses = List.of("10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.4:8080", "10.0.0.5:8080");
        for (String a : addresses) {
            prober.agent(a, "node-" + a.charAt(7), "GPU-" + a.charAt(7));
        }
        discovery.set(addresses.toArray(String[]::new));
        MeshScheduler s = scheduler(1, 4, Duration.ofSeconds(1), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));

        Set<String> probedSoFar = new LinkedHashSet<>();
        for (int r = 0; r < 80; r++) {
            round(s);
            probedSoFar.addAll(prober.probedTargets);
            // every peer is asked who it is in round 1, so its pair is there from then on: unknown until probed
            assertThat(state.snapshot()).as("round %d", r + 1).extracting(PairState::targetNode)
                    .containsExactlyInAnyOrder("node-2", "node-3", "node-4", "node-5");
            for (PairState p : state.snapshot()) {
                assertThat(p.state()).as("round %d, %s", r + 1, p.targetNode()).isEqualTo(
                        probedSoFar.contains(p.targetNode()) ? PairState.State.OK : PairState.State.UNKNOWN);
            }
        }
        assertThat(probedSoFar).hasSize(4);
        assertThat(prober.probeRounds).as("one peer per round").hasSize(80);
    }

    @Test
    void withSubsetsAPeerStillBusyFromAnEarlierRoundGivesItsPlaceToOneThatCanBeProbed() throws Exception {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0");
        MeshScheduler s = scheduler(1, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        prober.onProbeOf = key -> {
            if (key.targetNode().equals("node-b")) {
                try {
                    answer.await(); // slow to answer: its exchange outlives the round that started it
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        java.util.concurrent.ExecutorService caller = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            for (int r = 0; r < 20 && !busy(s, "10.0.0.2:8080"); r++) {
                caller.submit(() -> round(s)).get(5, TimeUnit.SECONDS);
            }
            assertThat(busy(s, "10.0.0.2:8080")).as("node-b was drawn and is still being probed").isTrue();
            prober.calls.clear();
            int rounds = 12;
            for (int r = 0; r < rounds; r++) {
                caller.submit(() -> round(s)).get(5, TimeUnit.SECONDS);
            }

            assertThat(prober.probes()).as("the one place of each round went to node-c")
                    .containsExactlyElementsOf(Collections.nCopies(rounds, SELF_GPU + ">GPU-c0"));
        } finally {
            answer.countDown();
            caller.shutdownNow();
        }
    }

    @RepeatedTest(4)
    void withSubsetsAPeerWhosePairFailedIsProbedAgainTheNextRoundBesideTheK() {
        long seed = new Random().nextLong();
        Random rnd = new Random(seed);
        int n = 6 + rnd.nextInt(10);
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String a = "10.0.0." + (2 + i) + ":8080";
            prober.agent(a, "node-" + i, "GPU-" + i);
            addresses.add(a);
        }
        discovery.set(addresses.toArray(String[]::new));
        String failing = "node-" + rnd.nextInt(n);
        int failFor = 3 + rnd.nextInt(4); // rounds in a row its import fails once it is first probed
        MeshScheduler s = scheduler(1, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        List<Long> failingProbed = new ArrayList<>();
        int failuresLeft = failFor;
        for (int r = 1; r <= 60; r++) {
            prober.failing.clear();
            if (failuresLeft > 0) {
                prober.failing.add(failing);
            }
            prober.probedTargets.clear();
            round(s);
            if (prober.probedTargets.contains(failing)) {
                failingProbed.add((long) r);
                failuresLeft = Math.max(0, failuresLeft - 1);
            }
            assertThat(prober.probedTargets).as("seed %d, round %d: the drawn one, and the failing one", seed, r)
                    .hasSizeBetween(1, 2);
        }

        // From its first probe on it fails failFor times, each time probed again the round after; the last of those
        // rounds passes, and after that it waits for its draws like the others.
        long first = failingProbed.getFirst();
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i <= failFor; i++) {
            expected.add(first + i);
        }
        assertThat(failingProbed).as("seed %d", seed).startsWith(expected.toArray(Long[]::new));
        assertThat(stateOf(state.snapshot().stream().filter(p -> p.targetNode().equals(failing)).findFirst()
                .orElseThrow().key())).isEqualTo(PairState.State.OK);
    }

    @Test
    void withSubsetsAPeerBackingOffIsNotDrawnUntilItIsDue() {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.3:8080", "node-c", "GPU-c0"); // 10.0.0.2 never answers: it backs off 1, 2, 4, 8 rounds
        MeshScheduler s = scheduler(1, 4, Duration.ofSeconds(8), () -> 0.5, new AtomicLong(), List.of(SELF_GPU));
        int rounds = 40;
        for (int r = 0; r < rounds; r++) {
            round(s);
        }

        // A round probes node-c unless it drew the silent peer in a round when that one was due again; drawn while
        // backing off, the silent peer took the only place and the round probed nothing.
        List<Long> attempts = prober.identifyRounds("10.0.0.2:8080");
        assertThat(attempts).containsExactly(1L, 2L, 4L, 8L, 16L, 24L, 32L, 40L);
        assertThat(prober.probeRounds).hasSizeGreaterThanOrEqualTo(rounds - attempts.size())
                .doesNotHaveDuplicates();
    }

    private static boolean busy(MeshScheduler s, String address) {
        MeshScheduler.PeerTrack t = s.tracks().get(address);
        return t != null && t.busy();
    }

    @RepeatedTest(12)
    void withSubsetsTheKPlacesGoToPeersOfOurOwnDomainNotToPeersThatCannotShareOne() {
        java.util.Random rnd = new java.util.Random();
        long seed = rnd.nextLong();
        rnd.setSeed(seed);
        int nNear = 3 + rnd.nextInt(10);
        int nApart = 10 + rnd.nextInt(31);
        int k = 1 + rnd.nextInt(nNear - 1); // fewer places than peers of our domain: the choice matters
        String ours = "fabric:cluster/1";
        Set<String> near = new LinkedHashSet<>();
        Set<String> apart = new LinkedHashSet<>();
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < nNear + nApart; i++) {
            String address = "10.0." + (i / 200) + "." + (2 + i % 200) + ":8080";
            String node = "node-" + i;
            boolean same = i < nNear;
            prober.agentIn(same ? ours : "fabric:cluster/" + (2 + rnd.nextInt(7)), address, node,
                    "GPU-" + i + "-0", "GPU-" + i + "-1");
            (same ? near : apart).add(address);
            addresses.add(address);
        }
        Collections.shuffle(addresses, rnd);
        discovery.set(addresses.toArray(String[]::new));
        Map<Long, Set<String>> probedByRound = new ConcurrentHashMap<>();
        prober.onProbeOf = key -> probedByRound.computeIfAbsent(schedulers.getLast().round(),
                r -> ConcurrentHashMap.newKeySet()).add(key.targetNode());
        MeshScheduler s = scheduler(k, 4, Duration.ofSeconds(1), () -> 0.5, new AtomicLong(),
                new FakeSelf(List.of(SELF_GPU), ours));
        String why = "seed " + seed + ", " + nNear + " peers in our domain, " + nApart + " apart, k=" + k;

        Set<String> apartPairs = new java.util.HashSet<>();
        apart.forEach(a -> prober.live.get(a).gpus().forEach(g -> apartPairs.add(prober.live.get(a).node() + "/" + g.uuid())));
        round(s);
        assertThat(addresses).as("every peer asked who it is in the first round, at most k probed: %s", why)
                .allSatisfy(a -> assertThat(prober.identifyRounds(a)).containsExactly(1L));
        assertThat(probedByRound.getOrDefault(1L, Set.of()).size()).as(why).isLessThanOrEqualTo(k);
        assertThat(notProbed()).as("every pair into another domain shown from the first round: %s", why)
                .containsAll(apartPairs);
        Set<String> nearPairs = new java.util.HashSet<>();
        near.forEach(a -> prober.live.get(a).gpus()
                .forEach(g -> nearPairs.add(prober.live.get(a).node() + "/" + g.uuid())));
        Map<String, PairState.State> firstRound = new java.util.HashMap<>();
        state.snapshot().forEach(p -> firstRound.put(p.targetNode() + "/" + p.targetGpu(), p.state()));
        assertThat(firstRound.keySet()).as("every pair in the mesh from the first round: %s", why)
                .containsAll(nearPairs).hasSize(nearPairs.size() + apartPairs.size());
        Set<String> probedFirst = probedByRound.getOrDefault(1L, Set.of());
        for (String pair : nearPairs) {
            String node = pair.substring(0, pair.indexOf('/'));
            assertThat(firstRound.get(pair)).as("%s after the first round (probed then: %s): %s", pair,
                    probedFirst.contains(node), why)
                    .isEqualTo(probedFirst.contains(node) ? PairState.State.OK : PairState.State.UNKNOWN);
        }
        long from = s.round() + 1;
        for (int r = 0; r < 60; r++) {
            round(s);
        }
        for (long r = from; r < from + 60; r++) {
            long round = r;
            assertThat(probedByRound.getOrDefault(r, Set.of())).as("round %d: %s", r, why).hasSize(k)
                    .allSatisfy(node -> assertThat(near).contains(addressOf(node)));
            long identifiedApart = apart.stream().filter(a -> prober.identifyRounds(a).contains(round)).count();
            assertThat(identifiedApart).as("peers apart asked who they are in round %d: %s", r, why)
                    .isLessThanOrEqualTo(k);
        }
        assertThat(notProbed()).as("pairs into other domains kept, never probed: %s", why).isEqualTo(apartPairs);
    }

    private Set<String> notProbed() {
        Set<String> out = new java.util.HashSet<>();
        state.snapshot().stream().filter(p -> p.state() == PairState.State.NOT_PROBED)
                .forEach(p -> out.add(p.targetNode() + "/" + p.targetGpu()));
        return out;
    }

    private String addressOf(String node) {
        return prober.live.entrySet().stream().filter(e -> e.getValue().node().equals(node)).map(Map.Entry::getKey)
                .findFirst().orElseThrow();
    }

    private PairState.State stateOf(PairKey key) {
        return state.snapshot().stream().filter(p -> p.key().equals(key)).map(PairState::state).findFirst()
                .orElse(null);
    }

    // ---- fakes --------------------------------------------------------------------------------------------

    private static final class FakeSelf implements LocalAgent {
        static final String ID = "agent-self";
        private final List<GpuDevice> gpus = new ArrayList<>();

        FakeSelf(List<String> uuids) {
            this(uuids, null);
        }

        FakeSelf(List<String> uuids, String domain) {
            for (int i = 0; i < uuids.size(); i++) {
                gpus.add(new GpuDevice(i, uuids.get(i), "NVIDIA H200", null, Map.of(), 2L << 20, null, null, null, null,
                        domain, null, null, null));
            }
        }

        @Override
        public String node() {
            return "node-self";
        }

        @Override
        public String agentId() {
            return ID;
        }

        @Override
        public List<GpuDevice> gpus() {
            return gpus;
        }
    }

    // ---- observer mode --------------------------------------------------------------------------------------

    @Test
    void anObserverProbesNothingAndShowsItsPairsAsNotProbedNeverFailed() {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0", "GPU-b1");
        MeshScheduler s = scheduler().observer(true);

        round(s);
        round(s);

        assertThat(prober.probes()).as("no probe, so no context and no allocation").isEmpty();
        List<PairState> pairs = state.snapshot();
        assertThat(pairs).extracting(p -> p.targetNode() + "/" + p.targetGpu())
                .containsExactlyInAnyOrder("node-b/GPU-b0", "node-b/GPU-b1");
        assertThat(pairs).allSatisfy(p -> {
            assertThat(p.state()).isEqualTo(PairState.State.NOT_PROBED);
            assertThat(p.finding().code()).isEqualTo("OBSERVER_MODE");
        });
        assertThat(state.peersKnown()).as("the silent peer is still discovered").isEqualTo(2);
    }

    @Test
    void pairsIntoAnObserverAreNotProbedWithItsReasonOthersAreProbed() {
        discovery.set("10.0.0.2:8080", "10.0.0.3:8080");
        prober.agent("10.0.0.2:8080", "node-b", "GPU-b0");
        prober.live.put("10.0.0.3:8080", new Prober.Peer("10.0.0.3:8080", "node-c", "agent-node-c",
                List.of(new GpuSelector.Gpu(0, "GPU-c0")), "observer"));
        MeshScheduler s = scheduler();

        round(s);

        assertThat(prober.probes()).containsExactly(SELF_GPU + ">GPU-b0");
        Map<String, PairState> byTarget = new java.util.HashMap<>();
        state.snapshot().forEach(p -> byTarget.put(p.targetNode(), p));
        assertThat(byTarget.get("node-b").state()).isEqualTo(PairState.State.OK);
        PairState into = byTarget.get("node-c");
        assertThat(into.state()).isEqualTo(PairState.State.NOT_PROBED);
        assertThat(into.finding().code()).isEqualTo("OBSERVER_TARGET");
        assertThat(into.finding().evidence()).containsEntry("targetNode", "node-c");
        assertThat(into.cuResult()).isNull();
    }

    private static final class FakeDiscovery implements PeerDiscovery {
        private volatile Set<PeerAddress> peers = Set.of();
        volatile boolean fail;
        final AtomicInteger lookUps = new AtomicInteger();

        void set(String... hostPorts) {
            Set<PeerAddress> s = new LinkedHashSet<>();
            for (String hp : hostPorts) {
                s.add(PeerAddress.parse(hp, "static"));
            }
            peers = Collections.unmodifiableSet(s);
        }

        @Override
        public Set<PeerAddress> peers() {
            lookUps.incrementAndGet();
            if (fail) {
                throw new IllegalStateException("discovery broke");
            }
            return peers;
        }

        @Override
        public List<DiscoveryStatus> statuses() {
            return List.of();
        }
    }

    /** Agents by address; an address without a live agent does not answer. */
    private final class FakeProber implements MeshScheduler.PairProber {
        private final Map<String, Prober.Peer> live = new ConcurrentHashMap<>();
        /** Agents that say who they are but answer no exchange. */
        final Set<String> silent = ConcurrentHashMap.newKeySet();
        /** Nodes whose imports fail (they answer: 800 at import). */
        final Set<String> failing = ConcurrentHashMap.newKeySet();
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<Direction> directions = new CopyOnWriteArrayList<>();
        final List<Long> probeRounds = new CopyOnWriteArrayList<>();
        final Set<String> probedTargets = ConcurrentHashMap.newKeySet();
        private final Map<String, List<Long>> identifyRounds = new ConcurrentHashMap<>();
        volatile Runnable onProbe = () -> { };
        volatile Runnable around = () -> { };
        volatile java.util.function.Consumer<PairKey> onProbeOf = k -> { };
        private MeshScheduler current;

        void agent(String address, String node, String... gpus) {
            agentWithId(address, node, "agent-" + node, null, gpus);
        }

        /** This very agent, reachable under another address (a node IP in a static list, say). */
        void ourselves(String address) {
            agentWithId(address, "node-self", FakeSelf.ID, null, SELF_GPU);
        }

        /** An agent whose GPUs are all in one IMEX domain. */
        void agentIn(String domain, String address, String node, String... gpus) {
            agentWithId(address, node, "agent-" + node, domain, gpus);
        }

        private void agentWithId(String address, String node, String id, String domain, String... gpus) {
            List<GpuSelector.Gpu> list = new ArrayList<>();
            for (int i = 0; i < gpus.length; i++) {
                list.add(new GpuSelector.Gpu(i, gpus[i], domain));
            }
            live.put(address, new Prober.Peer(address, node, id, List.copyOf(list)));
        }

        void down(String address) {
            live.remove(address);
        }

        List<Long> identifyRounds(String address) {
            return identifyRounds.getOrDefault(address, List.of());
        }

        List<String> probes() {
            return calls.stream().filter(c -> c.contains(">")).toList();
        }

        @Override
        public Prober.Identification identify(String target) {
            long round = schedulers.getLast().round();
            identifyRounds.computeIfAbsent(target, k -> new CopyOnWriteArrayList<>()).add(round);
            Prober.Peer p = live.get(target);
            return p != null ? new Prober.Identification(p, null)
                    : new Prober.Identification(null, refused());
        }

        @Override
        public PairResult probePair(Prober.Peer peer, GpuSelector.Gpu local, GpuSelector.Gpu remote,
                                    Direction direction, Long sizeBytes, boolean writeback) {
            calls.add(local.uuid() + ">" + remote.uuid());
            directions.add(direction);
            probeRounds.add(schedulers.getLast().round());
            probedTargets.add(peer.node());
            onProbeOf.accept(new PairKey("node-self", local.uuid(), peer.node(), remote.uuid()));
            onProbe.run();
            around.run();
            if (!live.containsKey(peer.target()) || silent.contains(peer.target())) {
                return ProbeResults.unreachable("node-self", local.uuid(), peer.target(), peer.node(), remote.uuid());
            }
            if (failing.contains(peer.node())) {
                return ProbeResults.failAt(dev.imexprobe.probe.Stage.IMPORT, dev.imexprobe.cuda.CuResult.of(800),
                        "node-self", local.uuid(), peer.node(), remote.uuid());
            }
            return ProbeResults.pass("node-self", local.uuid(), peer.node(), remote.uuid());
        }

        @Override
        public PairResult unreachablePair(String target, Prober.Peer known, GpuSelector.Gpu local,
                                          GpuSelector.Gpu remote, PeerCall<?> call) {
            return ProbeResults.unreachable("node-self", local.uuid(), target, known != null ? known.node() : target,
                    remote != null ? remote.uuid() : null);
        }

        private PeerCall<Object> refused() {
            return new PeerCall<>(PeerCall.Kind.UNREACHABLE, null, 0, "connection refused", 1_000_000);
        }
    }

    /** Records what the scheduler asks to run and when; runs nothing by itself. */
    private static final class RecordingTimer extends ScheduledThreadPoolExecutor {
        final List<Long> delays = new CopyOnWriteArrayList<>();
        private final List<Runnable> tasks = new CopyOnWriteArrayList<>();

        RecordingTimer() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            delays.add(unit.toMillis(delay));
            tasks.add(command);
            return null;
        }

        void runLast() {
            tasks.getLast().run();
        }
    }
}
