package dev.imexprobe.cuda;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class PrimaryContextsTest {

    private final List<Integer> released = Collections.synchronizedList(new ArrayList<>());
    private final Random random = new Random();

    @Test
    void heldWhileInUseAndReleasedOnlyAfterTheLinger() {
        PrimaryContexts c = new PrimaryContexts(g -> released.add(g), Duration.ofMillis(300));
        int gpu = random.nextInt(8);
        assertThat(c.held(gpu)).isFalse();
        c.with(gpu, () -> null);
        assertThat(c.held(gpu)).as("lingers").isTrue();
        assertThat(released).isEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> !c.held(gpu));
        assertThat(released).containsExactly(gpu);
        assertThat(c.creations(gpu)).isEqualTo(1);
    }

    @Test
    void cancelledReleasesLeaveTheTimersQueue() {
        PrimaryContexts c = new PrimaryContexts(g -> released.add(g), Duration.ofHours(1));
        int gpu = random.nextInt(8);
        // Other tests' releases may run meanwhile and only shrink the queue: hence at most, not exactly.
        int before = PrimaryContexts.releasesQueued();
        int probes = 500 + random.nextInt(1000);
        for (int i = 0; i < probes; i++) {
            c.with(gpu, () -> null); // each schedules a release that the next one cancels
        }
        assertThat(PrimaryContexts.releasesQueued()).as("after %d probes", probes).isLessThanOrEqualTo(before + 1);
        c.enter(gpu);
        assertThat(PrimaryContexts.releasesQueued()).isLessThanOrEqualTo(before);
        c.linger(Duration.ZERO);
        c.exit(gpu);
        assertThat(released).containsExactly(gpu);
    }

    @Test
    void workWithinTheLingerReusesTheContext() throws InterruptedException {
        PrimaryContexts c = new PrimaryContexts(g -> released.add(g), Duration.ofMillis(400));
        int rounds = 3 + random.nextInt(5);
        for (int i = 0; i < rounds; i++) {
            c.with(0, () -> null);
            Thread.sleep(100);
        }
        assertThat(c.creations(0)).isEqualTo(1);
        assertThat(released).isEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> !c.held(0));
        c.with(0, () -> null);
        assertThat(c.creations(0)).as("a new round after the linger makes a new one").isEqualTo(2);
    }

    @Test
    void aLiveAllocationKeepsItPastTheLinger() throws InterruptedException {
        PrimaryContexts c = new PrimaryContexts(g -> released.add(g), Duration.ZERO);
        c.enter(1); // an export that lives on
        c.with(1, () -> null);
        Thread.sleep(100);
        assertThat(c.held(1)).isTrue();
        assertThat(released).isEmpty();
        c.exit(1);
        assertThat(c.held(1)).isFalse();
        assertThat(released).containsExactly(1);
    }

    @Test
    void ifHeldNeverCreatesOne() {
        PrimaryContexts c = new PrimaryContexts(g -> released.add(g), Duration.ofSeconds(10));
        assertThat(c.ifHeld(2, () -> "asked")).isNull();
        assertThat(c.creations(2)).isZero();
        c.enter(2);
        assertThat(c.ifHeld(2, () -> "asked")).isEqualTo("asked");
        c.exit(2);
    }

    @Test
    void neverReleasedUnderConcurrentWork() throws Exception {
        List<Integer> releasedWhileBusy = Collections.synchronizedList(new ArrayList<>());
        int[] busy = new int[1];
        PrimaryContexts[] holder = new PrimaryContexts[1];
        holder[0] = new PrimaryContexts(g -> {
            synchronized (busy) {
                if (busy[0] > 0) {
                    releasedWhileBusy.add(g);
                }
            }
            return true;
        }, Duration.ZERO);
        PrimaryContexts c = holder[0];
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch done = new CountDownLatch(8);
        for (int t = 0; t < 8; t++) {
            pool.submit(() -> {
                for (int i = 0; i < 2000; i++) {
                    c.with(0, () -> {
                        synchronized (busy) {
                            busy[0]++;
                        }
                        synchronized (busy) {
                            busy[0]--;
                        }
                        return null;
                    });
                }
                done.countDown();
            });
        }
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        pool.shutdown();
        assertThat(releasedWhileBusy).isEmpty();
        assertThat(c.held(0)).isFalse();
        assertThatThrownBy(() -> c.exit(0)).isInstanceOf(IllegalStateException.class);
    }
}
