package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which idle worker takes up a task: the most recently parked, whether woken by the offer itself or ahead of it by
 * an announcement, so that the driver's calls keep coming from the thread that made the last ones.
 */
class WakeQueueTest {

    private final List<Thread> workers = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (Thread t : workers) {
            t.interrupt();
            t.join(5_000);
        }
    }

    /** Starts {@code n} workers one after another, each parked in {@code poll} before the next starts. */
    private List<CompletableFuture<Runnable>> parkWorkers(WakeQueue q, int n) {
        List<CompletableFuture<Runnable>> taken = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            CompletableFuture<Runnable> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    f.complete(q.poll(60, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    f.completeExceptionally(e);
                }
            }, "worker-" + i);
            t.setDaemon(true);
            workers.add(t);
            taken.add(f);
            t.start();
            awaitParked(q, t);
        }
        return taken;
    }

    private static void awaitParked(WakeQueue q, Thread t) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(t.getState() == Thread.State.TIMED_WAITING && LockSupport.getBlocker(t) == q)) {
            assertThat(System.nanoTime() - deadline).as(t.getName() + " parked in time").isNegative();
            Thread.onSpinWait();
        }
    }

    /** A task told apart from any other by identity. */
    private record Task(String name) implements Runnable {
        @Override
        public void run() {
        }
    }

    /** The index of the worker that has taken {@code task}, once one has; no other may have it. */
    private static int whoTook(List<CompletableFuture<Runnable>> taken, Runnable task) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (;;) {
            int who = -1;
            for (int i = 0; i < taken.size(); i++) {
                if (taken.get(i).getNow(null) == task) {
                    assertThat(who).as("one worker takes the task").isEqualTo(-1);
                    who = i;
                }
            }
            if (who >= 0) {
                return who;
            }
            assertThat(System.nanoTime() - deadline).as("a worker takes %s in time", task).isNegative();
            Thread.onSpinWait();
        }
    }

    @Test
    void anOfferWakesTheMostRecentlyParkedWorker() {
        WakeQueue q = new WakeQueue(8, () -> 0);
        int n = ThreadLocalRandom.current().nextInt(3, 7);
        List<CompletableFuture<Runnable>> taken = parkWorkers(q, n);

        Runnable first = new Task("first");
        assertThat(q.offer(first)).isTrue();
        assertThat(whoTook(taken, first)).as("of %d parked, the last", n).isEqualTo(n - 1);

        Runnable second = new Task("second");
        assertThat(q.offer(second)).isTrue();
        assertThat(whoTook(taken, second)).as("then the one parked before it").isEqualTo(n - 2);
        assertThat(q.size()).isZero();
    }

    @Test
    void anAnnouncementWakesTheMostRecentlyParkedWorker() {
        long spin = TimeUnit.MILLISECONDS.toNanos(500); // the armed worker spins from now for the rest of the test
        WakeQueue q = new WakeQueue(8, () -> spin);
        int n = ThreadLocalRandom.current().nextInt(3, 7);
        List<CompletableFuture<Runnable>> taken = parkWorkers(q, n);

        q.expect(0);
        Thread armed = workers.get(n - 1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (armed.getState() != Thread.State.RUNNABLE) { // woken to spin, not to take anything yet
            assertThat(System.nanoTime() - deadline).as("the last parked worker spins").isNegative();
            Thread.onSpinWait();
        }
        for (int i = 0; i < n - 1; i++) {
            assertThat(LockSupport.getBlocker(workers.get(i))).as("worker-%d still parked", i).isSameAs(q);
        }

        Runnable task = new Task("announced");
        assertThat(q.offer(task)).isTrue();
        assertThat(whoTook(taken, task)).isEqualTo(n - 1);
    }

    @Test
    void tasksOfferedWhileAWorkerReturnsAreEachTakenUpByAnIdleWorker() throws Exception {
        WakeQueue q = new WakeQueue(16, () -> 0);
        int idle = ThreadLocalRandom.current().nextInt(2, 6);
        List<CompletableFuture<Runnable>> taken = parkWorkers(q, idle);
        // A worker that finished a task and has not looked at the queue yet: offers meanwhile wake nobody.
        CountDownLatch marked = new CountDownLatch(1);
        CountDownLatch look = new CountDownLatch(1);
        CompletableFuture<Runnable> returner = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            q.finished();
            marked.countDown();
            try {
                look.await();
                returner.complete(q.poll(60, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                returner.completeExceptionally(e);
            }
        }, "returning");
        t.setDaemon(true);
        workers.add(t);
        t.start();
        assertThat(marked.await(10, TimeUnit.SECONDS)).isTrue();
        List<Runnable> tasks = new ArrayList<>();
        for (int i = 0; i <= idle; i++) {
            tasks.add(new Task("task-" + i));
            assertThat(q.offer(tasks.getLast())).isTrue();
        }
        look.countDown();
        // Each worker takes one and none polls again, so every task but the first needs an idle worker woken.
        assertThat(returner.get(10, TimeUnit.SECONDS)).isSameAs(tasks.getFirst());
        for (Runnable task : tasks.subList(1, tasks.size())) {
            whoTook(taken, task);
        }
        assertThat(q.size()).isZero();
    }

    @Test
    void oneCallersSuccessiveStageListsRunOnOneDriverThread() {
        int lists = ThreadLocalRandom.current().nextInt(50, 151);
        for (Duration spin : List.of(Duration.ZERO, Duration.ofMillis(1))) {
            try (DriverExecutor pool = new DriverExecutor(16, Duration.ofSeconds(10), spin, () -> true)) {
                StageEngine engine = new StageEngine(pool);
                Map<String, Integer> ranOn = new HashMap<>();
                ProbeStage where = new ProbeStage() {
                    @Override
                    public Stage stage() {
                        return Stage.IMPORT;
                    }

                    @Override
                    public StageOutcome run(ProbeSession s) {
                        ranOn.merge(Thread.currentThread().getName(), 1, Integer::sum);
                        return StageOutcome.ok(CuResult.SUCCESS, "imported");
                    }
                };
                for (int i = 0; i < lists; i++) {
                    ProbeSession session = new ProbeSession((CudaDriver) null, HandleType.FABRIC, 2L << 20, 1L, 2L, 0, 0);
                    assertThat(engine.run(session, List.of(where)).getFirst().status()).isEqualTo(StageStatus.OK);
                }
                assertThat(ranOn.keySet()).allMatch(name -> name.startsWith("driver-"));
                int most = ranOn.values().stream().max(Integer::compare).orElseThrow();
                // Waking the longest-idle of 16 threads would give each about a sixteenth.
                assertThat(most).as("spin %s, %d lists: %s", spin, lists, ranOn).isGreaterThanOrEqualTo(lists * 8 / 10);
            }
        }
    }

    @Test
    void aWorkerThatSaidItWasReturningButEndedKeepsNoTaskWaiting() {
        try (DriverExecutor pool = new DriverExecutor(2, Duration.ofSeconds(2), Duration.ZERO, () -> true)) {
            pool.returning(); // not a driver thread: counts nothing
            CompletableFuture<String> thrown = new CompletableFuture<>();
            Thread.UncaughtExceptionHandler quiet = (t, e) -> thrown.complete(t.getName());
            assertThat(pool.start(() -> {
                Thread.currentThread().setUncaughtExceptionHandler(quiet);
                pool.returning();
                throw new IllegalStateException("a task that fails after saying it returns");
            })).isTrue();
            assertThat(thrown.orTimeout(10, TimeUnit.SECONDS).join()).startsWith("driver-");
            int tasks = ThreadLocalRandom.current().nextInt(3, 9);
            for (int i = 0; i < tasks; i++) {
                DriverExecutor.Outcome<String> o = pool.run(() -> Thread.currentThread().getName(), null);
                assertThat(o.timedOut()).as("task %d of %d taken up within the deadline", i, tasks).isFalse();
                assertThat(o.value()).startsWith("driver-");
            }
        }
    }
}
