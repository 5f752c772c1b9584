package dev.imexprobe.mesh;

import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Verdict;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** /probe's results recorded after its answer: in order, and never missed by a reader that drains first. */
class ProbeRecorderTest {

    private static PairResult pair(String target, Verdict v) {
        return new PairResult(Direction.PUSH, "a", "GPU-a", target, "GPU-" + target, v, 0.1, null, List.of(), null);
    }

    @Test
    void aReaderThatDrainsSeesEveryResultHandedBeforeIt() throws Exception {
        CountDownLatch slow = new CountDownLatch(1);
        List<String> seen = new CopyOnWriteArrayList<>();
        try (ProbeRecorder recorder = new ProbeRecorder(new MeshState(Clock.systemUTC()))) {
            recorder.addListener(r -> {
                try {
                    slow.await(5, TimeUnit.SECONDS); // the metrics take their time
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                seen.add(r.targetNode());
            });
            recorder.recordAfter(List.of(pair("b", Verdict.PASS), pair("c", Verdict.FAIL)));
            recorder.recordAfter(List.of(pair("d", Verdict.PASS)));
            assertThat(seen).as("not yet: the answer does not wait").isEmpty();
            Thread release = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                slow.countDown();
            });
            long t = System.nanoTime();
            recorder.drain();
            assertThat(System.nanoTime() - t).as("the reader waited for the recorder").isGreaterThan(50_000_000L);
            assertThat(seen).containsExactly("b", "c", "d");
            assertThat(recorder.state().snapshot()).hasSize(3);
            release.join();
        }
    }

    /**
     * The direct route promises its batch before its answer goes out and hands it over after: a reader that drains
     * meanwhile waits for it, even when a later promise was kept first.
     */
    @Test
    void aReaderWaitsForEveryBatchPromisedBeforeItWhateverOrderTheyAreKeptIn() throws Exception {
        try (ProbeRecorder recorder = new ProbeRecorder(new MeshState(Clock.systemUTC()))) {
            List<String> seen = new CopyOnWriteArrayList<>();
            recorder.addListener(r -> seen.add(r.targetNode()));
            ProbeRecorder.Promise first = recorder.promise();
            ProbeRecorder.Promise second = recorder.promise();
            second.record(List.of(pair("c", Verdict.PASS)));
            CountDownLatch drained = new CountDownLatch(1);
            Thread reader = Thread.ofPlatform().start(() -> {
                recorder.drain();
                drained.countDown();
            });
            long hold = 100 + new java.util.Random().nextInt(200);
            assertThat(drained.await(hold, TimeUnit.MILLISECONDS)).as("the first batch is not in yet").isFalse();
            assertThat(seen).containsExactly("c");
            first.record(List.of(pair("b", Verdict.FAIL)));
            first.record(List.of(pair("x", Verdict.PASS))); // a promise is kept once
            assertThat(drained.await(2, TimeUnit.SECONDS)).isTrue();
            assertThat(seen).containsExactlyInAnyOrder("b", "c");
            reader.join();
            recorder.promise().record(List.of());
            long t = System.nanoTime();
            recorder.drain();
            assertThat(System.nanoTime() - t).as("an empty batch kept: nothing pending").isLessThan(1_000_000_000L);
        }
    }

    @Test
    void drainIsFreeWhenNothingIsPendingAndBoundedWhenTheRecorderHangs() {
        CountDownLatch never = new CountDownLatch(1);
        try (ProbeRecorder recorder = new ProbeRecorder(new MeshState(Clock.systemUTC()))) {
            long t = System.nanoTime();
            recorder.drain();
            assertThat(System.nanoTime() - t).isLessThan(50_000_000L);
            recorder.addListener(r -> {
                try {
                    never.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            recorder.recordAfter(List.of(pair("b", Verdict.PASS)));
            t = System.nanoTime();
            recorder.drain();
            assertThat((System.nanoTime() - t) / 1e9).as("a hung listener holds a reader at most 2 s")
                    .isBetween(1.9, 4.0);
            never.countDown();
        }
    }
}
