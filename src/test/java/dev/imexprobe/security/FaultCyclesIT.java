package dev.imexprobe.security;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * 1,000 fault cycles ({@code -Dimexprobe.faultcycles=…} changes the count): set a fault, probe (it must fail at the
 * right stage with the injected CUresult), clear it, probe (it must pass). The faults go round the driver entry
 * points of both sides of a push A → B, with several codes, a delay, and every 100th cycle a hang that times out
 * (each waits out the 500 ms deadline: 9 after the warm-up, so one thread leaked per hang exceeds the tolerance).
 * After a warm-up of 100 cycles, threads and resident memory of both agents are measured, and again at the end:
 * they must stay within the stated tolerance, with no driver resource held and no allocation file left.
 */
class FaultCyclesIT {

    /** Tolerances after warm-up: a leak of one thread or 8 KiB per cycle would exceed them. */
    static final int THREAD_TOLERANCE = 6;
    static final long RSS_TOLERANCE_KIB = 48 * 1024;
    static final long HEAP_TOLERANCE_KIB = 12 * 1024;
    static final int WARM_UP = 100;

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess a;
    static AgentProcess b;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        Map<String, String> env = Map.of("IMEXPROBE_DRIVER_TIMEOUT", "500ms", "IMEXPROBE_EXPORTS_TTL", "10s");
        a = AgentProcess.start("a", dir, machine.env(), "node-a", env);
        b = AgentProcess.start("b", dir, machine.env(), "node-b", env);
        AgentProcess.awaitReady(a, b);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a, b);
    }

    /** One fault: where (A exports, B imports), what, and the first stage that must fail with what. */
    record Fault(boolean onExporter, String spec, String stage, String status, Integer cuResult) {
        AgentProcess agent() {
            return onExporter ? a : b;
        }

        @Override
        public String toString() {
            return (onExporter ? "A " : "B ") + spec;
        }
    }

    static final List<Fault> FAULTS = List.of(
            new Fault(true, "cuMemCreate=2", "create", "failed", 2),
            new Fault(false, "cuMemImportFromShareableHandle=801", "import", "failed", 801),
            new Fault(true, "cuMemCreate=800", "create", "failed", 800),
            new Fault(false, "cuMemAddressReserve=2", "reserve", "failed", 2),
            new Fault(true, "cuMemAddressReserve=2", "create", "failed", 2),
            new Fault(false, "cuMemMap=1", "map", "failed", 1),
            new Fault(true, "cuMemMap=1", "create", "failed", 1),
            new Fault(false, "cuMemSetAccess=1", "access", "failed", 1),
            new Fault(true, "cuMemSetAccess=1", "create", "failed", 1),
            new Fault(false, "cuMemImportFromShareableHandle=800", "import", "failed", 800),
            new Fault(true, "cuLaunchKernel=1", "create", "failed", 1),
            new Fault(false, "imexprobe_pattern_compare=1", "verify", "failed", 1),
            new Fault(true, "cuMemExportToShareableHandle=1", "export", "failed", 1),
            new Fault(false, "imexprobe_pattern_fill=1", "writeback", "failed", 1),
            new Fault(true, "imexprobe_pattern_compare=1", "writeback", "failed", 1),
            new Fault(false, "cuMemImportFromShareableHandle=400", "import", "failed", 400),
            new Fault(false, "cuMemImportFromShareableHandle=101", "import", "failed", 101),
            new Fault(false, "cuMemMap=delay:20", null, null, null));
    static final Fault HANG = new Fault(false, "cuMemMap=hang", "map", "timeout", null);

    record Sample(int cycle, ProcessStats a, ProcessStats b, long heapA, long heapB) {
        @Override
        public String toString() {
            return String.format("cycle %d: A %d threads, RSS %d MiB, heap after GC %d MiB; B %d threads, RSS %d MiB, "
                    + "heap after GC %d MiB", cycle, a.threads(), a.rssKiB() / 1024, heapA / 1024, b.threads(),
                    b.rssKiB() / 1024, heapB / 1024);
        }
    }

    static Sample sample(int cycle) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            assertThat(a.liveAllocations()).as("A at cycle %d", cycle).isZero();
            assertThat(b.liveAllocations()).as("B at cycle %d", cycle).isZero();
            assertThat(machine.stateFiles()).as("allocation files at cycle %d", cycle).isEmpty();
        });
        long heapA = ProcessStats.heapUsedAfterGcKiB(a.pid());
        long heapB = ProcessStats.heapUsedAfterGcKiB(b.pid());
        return new Sample(cycle, ProcessStats.of(a.pid()), ProcessStats.of(b.pid()), heapA, heapB);
    }

    static JsonNode push() {
        AgentProcess.Reply r = a.get("/probe?target=" + b.hostPort() + "&direction=push", Duration.ofSeconds(60));
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        return r.json().get("results").get(0);
    }

    @Test
    void aThousandFaultCyclesLeakNoThreadNoMemoryNoAllocation() {
        int cycles = Integer.getInteger("imexprobe.faultcycles", 1000);
        Map<String, Integer> seen = new TreeMap<>();
        List<String> wrong = new ArrayList<>();
        Sample warm = null;
        long start = System.nanoTime();
        for (int i = 1; i <= cycles; i++) {
            Fault f = i % 100 == 0 ? HANG : FAULTS.get(i % FAULTS.size());
            f.agent().faults(f.spec());
            JsonNode failed = push();
            f.agent().clearFaults();
            JsonNode passed = push();
            seen.merge(f.toString(), 1, Integer::sum);

            String problem = check(f, failed);
            if (!passed.get("verdict").asString().equals("pass")) {
                problem = (problem == null ? "" : problem + "; ") + "the probe after clearing failed: " + passed;
            }
            if (problem != null && wrong.size() < 20) {
                wrong.add("cycle " + i + " (" + f + "): " + problem);
            }
            if (i == WARM_UP) {
                warm = sample(i);
                System.out.println("FaultCyclesIT: after warm-up, " + warm);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Sample end = sample(cycles);
        System.out.println("FaultCyclesIT: at the end,    " + end);
        System.out.printf("FaultCyclesIT: %d cycles (%d probes) in %.0f s; faults %s%n", cycles, 2 * cycles, seconds,
                seen);
        System.out.printf("FaultCyclesIT: growth after warm-up: A %+d threads, %+d MiB RSS, %+d KiB heap; B %+d threads, "
                + "%+d MiB RSS, %+d KiB heap (tolerance %d threads, %d MiB RSS, %d KiB heap)%n",
                end.a().threads() - warm.a().threads(), (end.a().rssKiB() - warm.a().rssKiB()) / 1024,
                end.heapA() - warm.heapA(), end.b().threads() - warm.b().threads(),
                (end.b().rssKiB() - warm.b().rssKiB()) / 1024, end.heapB() - warm.heapB(), THREAD_TOLERANCE,
                RSS_TOLERANCE_KIB / 1024, HEAP_TOLERANCE_KIB);
        assertThat(wrong).as("cycles that did not fail and recover as they should").isEmpty();
        assertThat(end.a().threads()).isLessThanOrEqualTo(warm.a().threads() + THREAD_TOLERANCE);
        assertThat(end.b().threads()).isLessThanOrEqualTo(warm.b().threads() + THREAD_TOLERANCE);
        assertThat(end.a().rssKiB()).isLessThanOrEqualTo(warm.a().rssKiB() + RSS_TOLERANCE_KIB);
        assertThat(end.b().rssKiB()).isLessThanOrEqualTo(warm.b().rssKiB() + RSS_TOLERANCE_KIB);
        if (warm.heapA() >= 0) {
            assertThat(end.heapA()).isLessThanOrEqualTo(warm.heapA() + HEAP_TOLERANCE_KIB);
            assertThat(end.heapB()).isLessThanOrEqualTo(warm.heapB() + HEAP_TOLERANCE_KIB);
        }
        assertThat(ProcessStats.threadsNamed(a.pid(), "driver-")).isLessThanOrEqualTo(16);
        assertThat(a.alive() && b.alive()).isTrue();
    }

    /** Null when the probe failed where and how the fault says (or passed, for a delay); else what is wrong. */
    static String check(Fault f, JsonNode result) {
        String verdict = result.get("verdict").asString();
        if (f.stage() == null) {
            return verdict.equals("pass") ? null : "a delay made it fail: " + result;
        }
        JsonNode first = null;
        for (JsonNode s : result.get("stages")) {
            String status = s.get("status").asString();
            if (status.equals("failed") || status.equals("timeout")) {
                first = s;
                break;
            }
        }
        if (!verdict.equals("fail") || first == null) {
            return "did not fail: " + result;
        }
        if (!first.get("name").asString().equals(f.stage()) || !first.get("status").asString().equals(f.status())) {
            return "first failure " + first.get("name").asString() + " " + first.get("status").asString()
                    + ", expected " + f.stage() + " " + f.status() + ": " + first;
        }
        Integer cu = first.has("cuResult") ? first.get("cuResult").asInt() : null;
        if (!java.util.Objects.equals(cu, f.cuResult())) {
            return "CUresult " + cu + ", expected " + f.cuResult() + ": " + first;
        }
        return null;
    }
}
