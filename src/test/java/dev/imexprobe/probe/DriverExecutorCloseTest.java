package dev.imexprobe.probe;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Closing the driver pool (the agent stopping): work already handed over still runs, for a queued list may be the
 * release of what a probe holds; new work is refused; a call stuck in the driver does not hold the close up.
 */
class DriverExecutorCloseTest {

    @Test
    void listsQueuedWhenThePoolClosesStillRun() throws Exception {
        DriverExecutor pool = new DriverExecutor(1, Duration.ofSeconds(5));
        CountDownLatch running = new CountDownLatch(1);
        assertThat(pool.start(() -> {
            running.countDown();
            sleep(200); // a list still inside the driver when the agent stops
        })).isTrue();
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        int queued = ThreadLocalRandom.current().nextInt(1, 4);
        AtomicInteger released = new AtomicInteger();
        for (int i = 0; i < queued; i++) {
            assertThat(pool.start(released::incrementAndGet)).as("queued behind it").isTrue();
        }

        pool.close();

        assertThat(released).as("every queued release ran before close returned").hasValue(queued);
        assertThat(pool.start(() -> { })).as("nothing new after close").isFalse();
    }

    @Test
    void aCallStuckInTheDriverDoesNotHoldTheCloseUp() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        DriverExecutor pool = new DriverExecutor(2, timeout);
        CountDownLatch never = new CountDownLatch(1);
        try {
            DriverExecutor.Outcome<Object> o = pool.run(() -> {
                await(never); // the call the driver never returns
                return null;
            }, late -> { });
            assertThat(o.timedOut()).isTrue();
            assertThat(pool.stuck()).isEqualTo(1);

            CompletableFuture<Long> closed = CompletableFuture.supplyAsync(() -> {
                long start = System.nanoTime();
                pool.close();
                return (System.nanoTime() - start) / 1_000_000;
            });
            long millis = closed.get(10, TimeUnit.SECONDS);
            // Only the stuck call is left, so close does not wait out the deadline (300 ms) for it.
            assertThat(millis).as("close took %d ms", millis).isLessThan(timeout.toMillis());
        } finally {
            never.countDown();
        }
    }

    @Test
    void aListThatKeepsRunningIsWaitedForAtMostOneDeadline() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        DriverExecutor pool = new DriverExecutor(1, timeout);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        try {
            assertThat(pool.start(() -> {
                running.countDown();
                await(never); // running, not yet given up on by its caller: close waits for it, up to the deadline
            })).isTrue();
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            pool.close();
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(millis).as("close took %d ms", millis).isBetween(timeout.toMillis() - 50, 5_000L);
        } finally {
            never.countDown();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
