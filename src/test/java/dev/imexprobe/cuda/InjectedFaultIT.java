package dev.imexprobe.cuda;

import dev.imexprobe.ladder.WorkerRequest;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.WorkerProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.util.Map;

import static dev.imexprobe.cuda.CrossProcessFabricIT.stage;
import static org.assertj.core.api.Assertions.assertThat;

/** Every fault the fake can inject surfaces at the right stage with its CUresult, and nothing leaks. */
class InjectedFaultIT {

    private static final long SIZE = 2L << 20;
    /** The hung worker's driver deadline: shorter than the worker's 5 s, so a hang case waits 2 s, not 5. */
    private static final int HANG_DEADLINE_SECONDS = 2;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}={1} on the {2} → {3}")
    @CsvSource({
            "cuMemCreate,                    2,   exporter, create,    CUDA_ERROR_OUT_OF_MEMORY",
            "cuMemExportToShareableHandle,   801, exporter, export,    CUDA_ERROR_NOT_SUPPORTED",
            "cuMemImportFromShareableHandle, 101, importer, import,    CUDA_ERROR_INVALID_DEVICE",
            "cuMemImportFromShareableHandle, 400, importer, import,    CUDA_ERROR_INVALID_HANDLE",
            "cuMemAddressReserve,            2,   importer, reserve,   CUDA_ERROR_OUT_OF_MEMORY",
            "cuMemMap,                       1,   importer, map,       CUDA_ERROR_INVALID_VALUE",
            "cuMemSetAccess,                 1,   importer, access,    CUDA_ERROR_INVALID_VALUE",
            "imexprobe_pattern_compare,      700, importer, verify,    CUDA_ERROR_ILLEGAL_ADDRESS",
            "imexprobe_pattern_fill,         401, importer, writeback, CUDA_ERROR_ILLEGAL_STATE",
            "cuMemUnmap,                     1,   importer, release,   CUDA_ERROR_INVALID_VALUE",
            "cuMemRelease,                   401, importer, release,   CUDA_ERROR_ILLEGAL_STATE",
    })
    void faultSurfacesAtItsStage(String entryPoint, int code, String side, String stageName, String name) {
        FakeMachine m = FakeMachine.h200(tmp);
        Map<String, String> faulty = m.env();
        faulty.put("FAKECUDA_FAULTS", entryPoint + "=" + code);
        boolean exporterFaulty = side.equals("exporter");
        try (WorkerProcess exporter = WorkerProcess.start(exporterFaulty ? faulty : m.env(), tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(exporterFaulty ? m.env() : faulty, tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 1L, null));
            JsonNode reply = e;
            if (!exporterFaulty) {
                assertThat(e.get("ok").asBoolean()).isTrue();
                reply = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 1L, 2L));
            }
            assertThat(reply.get("ok").asBoolean()).isEqualTo(stageName.equals("release"));
            assertThat(stage(reply, stageName, "status")).isEqualTo("failed");
            assertThat(stage(reply, stageName, "cuResultName")).isEqualTo(name);
            assertThat(stage(reply, stageName, "cuResult")).isEqualTo(Integer.toString(code));
            if (!stageName.equals("release")) {
                assertThat(stage(reply, "release", "status")).as("release still runs").isIn("ok", "skipped");
            }
            exporter.request(new WorkerRequest.Release());
            // A failed cuMemRelease is counted as released on our side; the fake still counts it as held.
            if (!entryPoint.equals("cuMemRelease") && !entryPoint.equals("cuMemUnmap")) {
                assertThat(importer.request(new WorkerRequest.Info()).get("fake").get("liveAllocations").asInt())
                        .isZero();
            }
        }
        assertThat(m.stateFiles()).isEmpty();
    }

    @Test
    void aDelayIsMeasuredInTheStagesDuration() {
        FakeMachine m = FakeMachine.h200(tmp);
        Map<String, String> env = m.env();
        env.put("FAKECUDA_FAULTS", "cuMemImportFromShareableHandle=delay:300");
        try (WorkerProcess exporter = WorkerProcess.start(m.env(), tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(env, tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 1L, null));
            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 1L, null));
            assertThat(i.get("ok").asBoolean()).isTrue();
            double seconds = Double.parseDouble(stage(i, "import", "durationSeconds"));
            assertThat(seconds).isBetween(0.29, 3.0);
        }
    }

    @Test
    void aHangIsATimeoutAndItsResourcesAreReleasedOnceTheHangClears() throws Exception {
        FakeMachine m = FakeMachine.h200(tmp);
        m.fault("cuMemMap=hang");
        Map<String, String> importerEnv = m.env();
        Map<String, String> exporterEnv = m.env();
        exporterEnv.put("FAKECUDA_FAULTS", "");
        try (WorkerProcess exporter = WorkerProcess.start(exporterEnv, tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(importerEnv, tmp.resolve("i.log"), HANG_DEADLINE_SECONDS)) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 1L, null));
            long start = System.nanoTime();
            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 1L, null));
            double waited = (System.nanoTime() - start) / 1e9;
            assertThat(stage(i, "map", "status")).isEqualTo("timeout");
            assertThat(stage(i, "release", "status")).isEqualTo("skipped");
            assertThat(stage(i, "release", "detail")).contains("deferred");
            assertBoundedByTheDeadline(i, "map", waited);
            assertThat(importer.request(new WorkerRequest.Info()).get("fake").get("liveAllocations").asInt())
                    .isEqualTo(1);
            m.clearFaults();
            // Once cuMemMap returns, the stuck thread releases the import on its own.
            long deadline = System.nanoTime() + 10_000_000_000L;
            int live = -1;
            while (System.nanoTime() < deadline) {
                live = importer.request(new WorkerRequest.Info()).get("fake").get("liveAllocations").asInt();
                if (live == 0) {
                    break;
                }
                Thread.sleep(50);
            }
            assertThat(live).isZero();
            // And the importer works again.
            JsonNode again = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 1L, null));
            assertThat(again.get("ok").asBoolean()).isTrue();
        }
    }

    /**
     * The pattern's page-locked staging (native/src/jni_bridge.c): at most two buffers kept per GPU while its context
     * lives, freed with it when the context is let go after the linger; and when the driver refuses page-locked
     * memory, the pattern still moves (through malloc'd memory) and the probe passes.
     */
    @ParameterizedTest(name = "cuMemHostAlloc refused: {0}")
    @CsvSource({"false", "true"})
    void theStagingIsFreedWithTheContextAndNotNeeded(boolean refused) throws Exception {
        FakeMachine m = FakeMachine.h200(tmp);
        Map<String, String> env = m.env();
        if (refused) {
            env.put("FAKECUDA_FAULTS", "cuMemHostAlloc=2");
        }
        long seed = 1 + new java.util.Random().nextInt(1 << 30);
        try (WorkerProcess exporter = WorkerProcess.start(env, tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(env, tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE * 3, seed, null));
            assertThat(e.get("ok").asBoolean()).as(e.toString()).isTrue();
            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE * 3, 0, seed, seed + 1));
            assertThat(i.get("ok").asBoolean()).as(i.toString()).isTrue();
            assertThat(stage(i, "verify", "status")).isEqualTo("ok");
            JsonNode back = exporter.request(new WorkerRequest.Verify(seed + 1));
            assertThat(back.get("ok").asBoolean()).as("the exporter reads the write-back: " + back).isTrue();
            JsonNode during = importer.request(new WorkerRequest.Info()).get("fake");
            assertThat(during.get("liveHostAllocations").asInt()).as("page-locked buffers the importer keeps")
                    .isEqualTo(refused ? 0 : 1);
            exporter.request(new WorkerRequest.Release());
            // Past the 2 s linger the context goes, and its staging with it (Info asks for memory only while a
            // context is held, so it does not make one).
            Thread.sleep(3_000);
            JsonNode fake = importer.request(new WorkerRequest.Info()).get("fake");
            assertThat(fake.get("liveContexts").asInt()).as("the context was let go: " + fake).isZero();
            assertThat(fake.get("liveHostAllocations").asInt()).isZero();
            // The next context gets staging of its own, not a buffer that went with the last one.
            JsonNode e2 = exporter.request(new WorkerRequest.Export(0, SIZE, seed + 2, null));
            JsonNode i2 = importer.request(new WorkerRequest.Import(e2.get("handle").asString(), SIZE, 0, seed + 2, null));
            assertThat(i2.get("ok").asBoolean()).as(i2.toString()).isTrue();
            assertThat(importer.request(new WorkerRequest.Info()).get("fake").get("liveHostAllocations").asInt())
                    .isEqualTo(refused ? 0 : 1);
            exporter.request(new WorkerRequest.Release());
        }
    }

    /**
     * The pattern kernels are a speed-up, not a requirement: where the driver cannot load them (an old driver, PTX JIT
     * turned off: here cuModuleLoadData refused with CUDA_ERROR_INVALID_PTX) the pattern is written and checked
     * through host memory and the exchange passes, each stage's detail saying so; where they load, a failed launch
     * is the create stage's failure, with its CUresult.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "''                      | true  | (by the GPU's fill kernel) | (compared on the GPU by the compare kernel), and 64 KiB at byte * by a copy engine (cuMemcpyDtoHAsync, beside the kernel)",
            "cuModuleLoadData=218    | true  | (through host memory: the driver could not load the fill kernel, CUDA_ERROR_INVALID_PTX) | (copied into host memory by cuMemcpyDtoH and compared there: the driver could not load the compare kernel, CUDA_ERROR_INVALID_PTX)",
            "cuModuleGetFunction=500 | true  | (through host memory: the driver could not load the fill kernel, CUDA_ERROR_NOT_FOUND) | (copied into host memory by cuMemcpyDtoH and compared there: the driver could not load the compare kernel, CUDA_ERROR_NOT_FOUND)",
            "cuLaunchKernel=700      | false | writing the pattern (by the GPU's fill kernel) returned CUDA_ERROR_ILLEGAL_ADDRESS | -"})
    void thePatternKernelsAreUsedWhereTheyLoad(String fault, boolean passes, String detail, String verifyDetail) {
        FakeMachine m = FakeMachine.h200(tmp);
        Map<String, String> env = m.env();
        env.put("FAKECUDA_FAULTS", fault);
        long seed = 1 + new java.util.Random().nextInt(1 << 30);
        try (WorkerProcess exporter = WorkerProcess.start(env, tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(env, tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, seed, null));
            assertThat(e.get("ok").asBoolean()).as(e.toString()).isEqualTo(passes);
            assertThat(stage(e, "create", "detail")).contains(detail);
            if (!passes) {
                assertThat(stage(e, "create", "status")).isEqualTo("failed");
                assertThat(stage(e, "create", "cuResultName")).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
                return;
            }
            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, seed, null));
            assertThat(stage(i, "verify", "status")).as(i.toString()).isEqualTo("ok");
            assertThat(stage(i, "verify", "detail")).matches(java.util.regex.Pattern.quote("read back 2 MiB " + verifyDetail
                    + ": pattern matches").replace("*", "\\E\\d+\\Q"));
            exporter.request(new WorkerRequest.Release());
        }
        assertThat(m.stateFiles()).isEmpty();
    }

    /**
     * Where the compare kernel reads the memory, a copy engine reads a window of it too: a copy through the mapping
     * that fails (here cuMemcpyDtoHAsync with CUDA_ERROR_ILLEGAL_ADDRESS, only the copy) fails verify with its CUresult,
     * although the SMs read the whole range right.
     */
    @Test
    void aCopyEngineThatCannotReadTheMappingFailsVerifyWhereTheKernelsReadIt() {
        FakeMachine m = FakeMachine.h200(tmp);
        Map<String, String> env = m.env();
        env.put("FAKECUDA_FAULTS", "cuMemcpyDtoHAsync=700");
        long seed = 1 + new java.util.Random().nextInt(1 << 30);
        try (WorkerProcess exporter = WorkerProcess.start(env, tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(env, tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, seed, null));
            assertThat(e.get("ok").asBoolean()).as(e.toString()).isTrue();
            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, seed, null));
            assertThat(i.get("ok").asBoolean()).isFalse();
            assertThat(stage(i, "verify", "status")).isEqualTo("failed");
            assertThat(stage(i, "verify", "cuResultName")).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(stage(i, "verify", "detail")).matches("read back 2 MiB \\(compared on the GPU by the compare "
                    + "kernel\\), matching; reading 64 KiB at byte \\d+ by a copy engine \\(cuMemcpyDtoHAsync, beside the "
                    + "kernel\\) returned "
                    + "CUDA_ERROR_ILLEGAL_ADDRESS: copies through the mapping fail where the SMs' reads succeed");
            exporter.request(new WorkerRequest.Release());
        }
        assertThat(m.stateFiles()).isEmpty();
    }

    /**
     * A hang is bounded where the deadline is enforced: the timed-out stage, timed inside the worker, took the driver
     * deadline. The request's wall time also holds the worker's cold first request and the host's load (0.5–0.8 s
     * over the deadline on an idle 2-core machine, 3 s once in a CI run on a loaded one), so it is bounded loosely:
     * the answer came, long before a hang without a deadline would give one.
     */
    private static void assertBoundedByTheDeadline(JsonNode reply, String stage, double waited) {
        double took = Double.parseDouble(stage(reply, stage, "durationSeconds"));
        assertThat(took).as("%s, timed in the worker, against the %d s driver deadline: %s", stage,
                HANG_DEADLINE_SECONDS, reply).isBetween((double) HANG_DEADLINE_SECONDS, HANG_DEADLINE_SECONDS + 0.5);
        assertThat(waited).as("the request's wall time").isBetween((double) HANG_DEADLINE_SECONDS,
                HANG_DEADLINE_SECONDS + 10.0);
    }

    /** A fill kernel that never loads or never finishes is a create timeout within the driver deadline, as any call. */
    @ParameterizedTest(name = "{0}=hang")
    @CsvSource({"cuModuleLoadData", "cuLaunchKernel"})
    void aHungFillKernelIsATimeout(String entryPoint) throws Exception {
        FakeMachine m = FakeMachine.h200(tmp);
        m.fault(entryPoint + "=hang");
        try (WorkerProcess exporter = WorkerProcess.start(m.env(), tmp.resolve("e.log"), HANG_DEADLINE_SECONDS)) {
            long start = System.nanoTime();
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 7L, null));
            double waited = (System.nanoTime() - start) / 1e9;
            assertThat(e.get("ok").asBoolean()).isFalse();
            assertThat(stage(e, "create", "status")).isEqualTo("timeout");
            assertBoundedByTheDeadline(e, "create", waited);
            m.clearFaults();
            // Once the call returns, the same process fills again.
            long deadline = System.nanoTime() + 10_000_000_000L;
            JsonNode again = null;
            while (System.nanoTime() < deadline) {
                exporter.request(new WorkerRequest.Release());
                again = exporter.request(new WorkerRequest.Export(0, SIZE, 8L, null));
                if (again.get("ok").asBoolean()) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(again.get("ok").asBoolean()).as(String.valueOf(again)).isTrue();
            exporter.request(new WorkerRequest.Release());
        }
    }
}
