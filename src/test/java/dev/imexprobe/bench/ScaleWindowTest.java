package dev.imexprobe.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The scale run's window (whole rounds of the agent's own probes) and its CPU by thread. */
class ScaleWindowTest {

    private final Random random = new Random();

    @Test
    void theWindowEndsWhenThePlannedRoundsAfterTheLastWholeOneAreServed() {
        for (int i = 0; i < 200; i++) {
            int peers = 1 + random.nextInt(100);
            int warmup = 1 + random.nextInt(4);
            int measured = 1 + random.nextInt(5);
            ScaleRun.Plan plan = new ScaleRun.Plan(peers, Duration.ofSeconds(3), warmup, measured, 1, false);
            // the warm-up ended as its last round did
            assertThat(ScaleRun.windowTarget((long) warmup * peers, plan)).isEqualTo((long) (warmup + measured) * peers);
            // it timed out in the middle of a round: that round is finished first
            int partial = 1 + random.nextInt(peers);
            long inRound = (long) warmup * peers + (partial == peers ? 0 : partial);
            long whole = partial == peers ? warmup : warmup + 1;
            assertThat(ScaleRun.windowTarget(inRound, plan)).isEqualTo((whole + measured) * peers);
        }
        assertThat(ScaleRun.windowTarget(0, new ScaleRun.Plan(71, Duration.ofSeconds(30), 2, 4, 1, false)))
                .isEqualTo(4 * 71);
    }

    @Test
    void theWindowsCpuByThreadListsTheLargestAndWhatTheRestTook() {
        Map<String, Double> before = new HashMap<>();
        Map<String, Double> after = new HashMap<>();
        List<String> names = List.of("http-nio-#-exec", "probe-driver-#", "C# CompilerThre", "mesh", "recorder",
                "cuda-context-li", "VM Thread", "GC Thread##", "scrape", "metrics");
        double total = 0;
        for (String n : names) {
            double b = random.nextInt(100) / 10.0;
            double d = (1 + random.nextInt(500)) / 100.0;
            before.put(n, b);
            after.put(n, b + d);
            total += d;
        }
        after.put("born in window", 0.25);
        total += 0.25;
        double ended = 0.4; // a thread that ended in the window: in the process's total, not in any reading
        Map<String, Object> m = ScaleRun.byThread(before, after, total + ended, 4);

        List<Double> deltas = new java.util.ArrayList<>(after.keySet().stream()
                .map(n -> after.get(n) - before.getOrDefault(n, 0.0)).sorted().toList().reversed());
        assertThat(m).hasSize(5).containsKey("(the rest)");
        List<Double> listed = m.entrySet().stream().filter(e -> !e.getKey().equals("(the rest)"))
                .map(e -> (Double) e.getValue()).toList();
        for (int i = 0; i < 4; i++) {
            assertThat(listed.get(i)).isCloseTo(deltas.get(i), within(0.001));
        }
        double rest = deltas.subList(4, deltas.size()).stream().mapToDouble(Double::doubleValue).sum() + ended;
        assertThat((Double) m.get("(the rest)")).isCloseTo(rest, within(0.01));
    }
}
