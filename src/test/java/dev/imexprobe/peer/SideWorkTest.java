package dev.imexprobe.peer;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Side work runs only while the wait is expected to outlast it twice over, and never breaks what waits. */
class SideWorkTest {

    private static Runnable sleeping(long millis, AtomicInteger runs) {
        return () -> {
            runs.incrementAndGet();
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    @Test
    void runsWhenTheWaitOutlastsItTwiceAndLeavesItOutOtherwise() {
        long millis = 4 + new Random().nextInt(4);
        AtomicInteger runs = new AtomicInteger();
        SideWork side = new SideWork();
        Runnable work = sleeping(millis, runs);
        assertThat(side.runIfTime(0, work)).as("no wait expected").isFalse();
        assertThat(side.runIfTime(TimeUnit.MILLISECONDS.toNanos(100), work)).as("first: nothing known of it").isTrue();
        // It took about `millis`: a wait of 1.5 times that is too short, one of 3 times is long enough.
        assertThat(side.runIfTime(TimeUnit.MICROSECONDS.toNanos(millis * 1500), work)).isFalse();
        assertThat(side.runIfTime(TimeUnit.MILLISECONDS.toNanos(millis * 3), work)).isTrue();
        assertThat(runs.get()).isEqualTo(2);
    }

    @Test
    void oneSlowRunDoesNotLeaveItOutForGood() {
        AtomicInteger runs = new AtomicInteger();
        SideWork side = new SideWork();
        assertThat(side.runIfTime(TimeUnit.SECONDS.toNanos(1), sleeping(40, runs))).isTrue(); // a GC, say
        long wait = TimeUnit.MILLISECONDS.toNanos(14);
        int skipped = 0;
        while (!side.runIfTime(wait, () -> runs.incrementAndGet())) {
            skipped++;
            assertThat(skipped).as("left out while the wait is under twice its last time, halved each time")
                    .isLessThanOrEqualTo(3);
        }
        // 40 ms → 20 → 10 → 5: after the third skip 5 ms, under half of the 14 ms wait.
        assertThat(skipped).isEqualTo(3);
        assertThat(runs.get()).isEqualTo(2);
    }

    @Test
    void itsExceptionIsDroppedAndItsTimeStillCounts() {
        SideWork side = new SideWork();
        assertThat(side.runIfTime(TimeUnit.SECONDS.toNanos(1), () -> {
            try {
                Thread.sleep(30);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("side work failed");
        })).isTrue();
        assertThat(side.runIfTime(TimeUnit.MILLISECONDS.toNanos(40), () -> { })).as("30 ms taken, 40 left").isFalse();
    }
}
