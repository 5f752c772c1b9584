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
        Map<String, Double> byName = new HashMap<>();
        List<String> names = List.of("http-nio-#-exec", "probe-driver-#", "C# CompilerThre", "mesh", "recorder",
                "cuda-context-li", "VM Thread", "GC Thread##", "scrape", "metrics");
        double total = 0;
        for (String n : names) {
            double d = (1 + random.nextInt(500)) / 100.0;
            byName.put(n, d);
            total += d;
        }
        double unseen = 0.4; // a thread that lived and ended between two readings: in the process's total only
        Map<String, Object> m = ScaleRun.byThread(byName, total + unseen, 4);

        List<Double> deltas = byName.values().stream().sorted(java.util.Comparator.reverseOrder()).toList();
        assertThat(m).hasSize(5).containsKey("(the rest)");
        List<Double> listed = m.entrySet().stream().filter(e -> !e.getKey().equals("(the rest)"))
                .map(e -> (Double) e.getValue()).toList();
        for (int i = 0; i < 4; i++) {
            assertThat(listed.get(i)).isCloseTo(deltas.get(i), within(0.001));
        }
        double rest = deltas.subList(4, deltas.size()).stream().mapToDouble(Double::doubleValue).sum() + unseen;
        assertThat((Double) m.get("(the rest)")).isCloseTo(rest, within(0.01));
    }

    @Test
    void theLedgerKeepsThreadsThatStartOrEndInsideTheWindow() {
        for (int run = 0; run < 50; run++) {
            Map<Integer, ThreadLedger.Reading> now = new HashMap<>();
            Map<String, Double> expected = new HashMap<>();
            int tid = 100;
            // alive throughout: a pool of 1-4 threads, counted from their readings at the start
            for (int i = 0; i < 1 + random.nextInt(4); i++) {
                now.put(tid++, new ThreadLedger.Reading("http-nio-" + (8000 + run) + "-exec-" + i, random.nextInt(50)));
            }
            ThreadLedger ledger = new ThreadLedger(Map.copyOf(now));
            Map<Integer, Double> startOf = new HashMap<>();
            now.forEach((t, r) -> startOf.put(t, r.seconds()));
            int compilerTid = -1;
            int samples = 2 + random.nextInt(20);
            for (int s = 0; s < samples; s++) {
                for (Map.Entry<Integer, ThreadLedger.Reading> e : Map.copyOf(now).entrySet()) {
                    now.put(e.getKey(), new ThreadLedger.Reading(e.getValue().name(),
                            e.getValue().seconds() + random.nextInt(10) / 100.0));
                }
                if (s == 0) { // a compiler thread born in the window, counted from zero
                    compilerTid = tid++;
                    now.put(compilerTid, new ThreadLedger.Reading("C1 CompilerThre", 0.05));
                }
                ledger.sample(Map.copyOf(now));
            }
            double compiler = now.get(compilerTid).seconds();
            boolean compilerEnds = random.nextBoolean();
            if (compilerEnds) {
                now.remove(compilerTid); // it ended after its last reading: that reading counts
            }
            for (Map.Entry<Integer, ThreadLedger.Reading> e : now.entrySet()) {
                if (e.getKey() != compilerTid) {
                    expected.merge("http-nio-#-exec-#", e.getValue().seconds() - startOf.get(e.getKey()), Double::sum);
                }
            }
            expected.put("C# CompilerThre" + (compilerEnds ? ThreadLedger.ENDED : ""), compiler);

            Map<String, Double> byName = ledger.byName(Map.copyOf(now));
            assertThat(byName.keySet()).isEqualTo(expected.keySet());
            expected.forEach((n, v) -> assertThat(byName.get(n)).as(n).isCloseTo(v, within(1e-9)));
            assertThat(ScaleRun.compilerSeconds(byName)).isCloseTo(compiler, within(1e-9));
        }
    }

    @Test
    void theJvmsMemoryIsSummedByAreaFromTheExposition() {
        double[] want = new double[4];
        StringBuilder text = new StringBuilder("# HELP jvm_memory_committed_bytes The amount of memory in bytes\n");
        String[][] pools = {{"heap", "Eden Space"}, {"heap", "Survivor Space"}, {"heap", "Tenured Gen"},
                {"nonheap", "Metaspace"}, {"nonheap", "CodeHeap 'non-profiled nmethods'"}, {"nonheap", "Compressed Class Space"}};
        for (String[] pool : pools) {
            int area = pool[0].equals("heap") ? 0 : 2;
            long committed = (1L + random.nextInt(200)) << 20;
            long used = (long) (committed * random.nextDouble());
            want[area] += committed;
            want[area + 1] += used;
            text.append("jvm_memory_committed_bytes{application=\"imexprobe\",area=\"").append(pool[0])
                    .append("\",id=\"").append(pool[1]).append("\"} ").append(committed).append(".0\n");
            text.append("jvm_memory_used_bytes{application=\"imexprobe\",area=\"").append(pool[0])
                    .append("\",id=\"").append(pool[1]).append("\"} ").append(String.format("%.1f", (double) used))
                    .append("\n");
        }
        text.append("jvm_memory_max_bytes{area=\"heap\",id=\"Tenured Gen\"} 3.2E8\n"); // not counted
        Map<String, Object> m = ScaleRun.jvmMemoryMiB(text.toString());
        String[] keys = {"heapCommitted", "heapUsed", "nonHeapCommitted", "nonHeapUsed"};
        for (int i = 0; i < 4; i++) {
            assertThat((Double) m.get(keys[i])).as(keys[i]).isCloseTo(want[i] / (1 << 20), within(0.001));
        }
    }
}
