package dev.imexprobe.agent;

import dev.imexprobe.probe.DriverExecutor;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

class DriverHealthTest {

    @Test
    void downOnlyWhileEveryThreadIsHeldByACallPastItsDeadline() throws Exception {
        int threads = 2 + new Random().nextInt(4);
        CountDownLatch release = new CountDownLatch(1);
        List<String> cleanedUp = new ArrayList<>();
        try (DriverExecutor executor = new DriverExecutor(threads, Duration.ofMillis(20))) {
            DriverHealth health = new DriverHealth(executor);
            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
            for (int i = 1; i <= threads; i++) {
                int n = i;
                DriverExecutor.Outcome<String> o = executor.run(() -> {
                    await(release);
                    return "call " + n;
                }, late -> {
                    synchronized (cleanedUp) {
                        cleanedUp.add(late);
                    }
                });
                assertThat(o.timedOut()).isTrue();
                // Counted once a thread has taken it up: on a loaded machine a new pool thread can start after the
                // 20 ms deadline, and work still queued is not stuck (DriverExecutor.stuck).
                long started = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (executor.stuck() < i && System.nanoTime() < started) {
                    Thread.sleep(1);
                }
                Health h = health.health(true);
                assertThat(h.getDetails()).containsEntry("callsStuck", i).containsEntry("threads", threads)
                        .containsKey("oldestStuckSeconds");
                assertThat(h.getStatus()).as("%d of %d held", i, threads).isEqualTo(i < threads ? Status.UP : Status.DOWN);
            }
            assertThat(executor.exhausted()).isTrue();
            assertThat(executor.run(() -> "more", null).rejected()).as("no thread left, nothing queued behind").isTrue();

            release.countDown();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (executor.stuck() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(executor.stuck()).isZero();
            assertThat(executor.oldestStuckSince()).isEmpty();
            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
            assertThat(health.health(true).getDetails()).doesNotContainKey("oldestStuckSeconds");
            synchronized (cleanedUp) {
                assertThat(cleanedUp).hasSize(threads).allMatch(s -> s.startsWith("call "));
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
