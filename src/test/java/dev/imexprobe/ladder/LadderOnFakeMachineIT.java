package dev.imexprobe.ladder;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.ladder.LadderReport.Cell;
import dev.imexprobe.ladder.LadderReport.Status;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.NativeBuild;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The whole ladder on fake machines: real worker processes, real JNI and dlopen of the fake driver, real mount
 * namespaces where this process may make them (root in CI). The fake must fail exactly where two H200s did.
 */
class LadderOnFakeMachineIT {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path tmp;

    /** A size cuMemCreate would refuse is the request's error, named before any rung runs, not every rung's failure. */
    @Test
    void aSizeThatIsNotAMultipleOfTheGranularityIsRefusedBeforeAnyRung() {
        FakeMachine m = twoGpus();
        long size = (2L << 20) + 4096;
        assertThatThrownBy(() -> new Ladder(WorkerLauncher.forThisJvm(env(m)), "test-node")
                .run(new LadderOptions(null, null, size, null, null)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("size: " + size + " bytes is not a multiple of GPU 0's allocation granularity (2097152 bytes)");
        assertThat(m.stateFiles()).isEmpty();
    }

    static Map<String, String> env(FakeMachine m) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.putAll(m.env());
        return env;
    }

    static LadderReport climb(FakeMachine m) {
        return new Ladder(WorkerLauncher.forThisJvm(env(m)), "test-node").run(LadderOptions.defaults());
    }

    private boolean namespaces() throws IOException {
        return Isolation.namespaceUnavailableReason(Files.createDirectories(tmp.resolve("ns-check"))) == null;
    }

    /** Two fake GPUs with device nodes and channels 0 and 1: every rung can run. */
    private FakeMachine twoGpus() {
        return FakeMachine.twoGpus(tmp.resolve("machine")).deviceNodes(0, 1).channels(0, 1);
    }

    /** The ladder as it climbed on two H200s (driver 580.159.04, docs/gpu-validation.md "Seed scenario on two GPUs"). */
    @Test
    void likeTwoH200sImportsBreakOnlyOnceTheExportersDeviceNodeIsHidden() throws IOException {
        FakeMachine m = twoGpus();
        boolean privileged = namespaces();
        LadderReport r = climb(m);

        for (Rung rung : List.of(Rung.ONE_PROCESS, Rung.TWO_PROCESSES, Rung.TWO_GPUS, Rung.VISIBLE_DEVICES,
                Rung.SAME_CHANNEL)) {
            for (HandleType t : HandleType.values()) {
                Cell c = r.cell(rung, t);
                assertThat(c.status()).as("rung %s %s: %s", rung.label(), t, c).isEqualTo(Status.PASS);
                assertThat(c.stages()).hasSize(10);
            }
        }
        assertThat(r.rung(Rung.VISIBLE_DEVICES).seen()).extracting(ProcessView::gpus)
                .containsExactly(List.of(r.exporterGpu().uuid()), List.of(r.importerGpu().uuid()));
        List<String> both = List.of(r.exporterGpu().uuid(), r.importerGpu().uuid());
        assertThat(r.rung(Rung.VISIBLE_DEVICES).seen()).as("NVML past CUDA_VISIBLE_DEVICES")
                .extracting(ProcessView::nvmlGpus).containsExactly(both, both);
        Cell other = r.cell(Rung.OTHER_CHANNEL, HandleType.FABRIC);
        assertThat(other.status()).as("800 expected: %s", other).isEqualTo(Status.PASS);
        assertThat(other.failedStage().cuResult()).isEqualTo(CuResult.NOT_PERMITTED.code());
        assertThat(r.rung(Rung.OTHER_CHANNEL).seen()).extracting(ProcessView::channels)
                .containsExactly(List.of("channel0"), List.of("channel1"));

        if (privileged) {
            Cell fabric = r.cell(Rung.DEVICE_NODES, HandleType.FABRIC);
            assertThat(fabric.status()).isEqualTo(Status.FAIL);
            assertThat(fabric.failedStage().name().label()).isEqualTo("import");
            assertThat(fabric.failedStage().cuResult()).isEqualTo(CuResult.NOT_SUPPORTED.code());
            assertThat(fabric.finding().code()).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
            assertThat(fabric.finding().evidence()).containsEntry("exporterGpuSeen", false)
                    .containsEntry("exporterGpu", r.exporterGpu().uuid());
            Cell fd = r.cell(Rung.DEVICE_NODES, HandleType.POSIX_FD);
            assertThat(fd.failedStage().cuResult()).isEqualTo(CuResult.INVALID_DEVICE.code());
            assertThat(r.rung(Rung.DEVICE_NODES).seen()).extracting(ProcessView::deviceNodes)
                    .containsExactly(List.of("nvidia0"), List.of("nvidia1"));
            assertThat(r.rung(Rung.DEVICE_NODES).seen()).as("NVML not past a hidden device node")
                    .extracting(ProcessView::nvmlGpus)
                    .containsExactly(List.of(r.exporterGpu().uuid()), List.of(r.importerGpu().uuid()));
            assertThat(r.rung(Rung.DEVICE_NODES).importer()).anyMatch(s -> s.contains("nvidia0")
                    && s.contains("mount namespace"));
            assertThat(r.verdict().code()).isEqualTo("LADDER_NEEDS_EXPORTER_DEVICE_NODE");
            assertThat(r.verdict().evidence()).containsEntry("rung", "4").containsEntry("driverResultCode", 801);
            assertThat(r.exitCode()).isEqualTo(LadderReport.FAILED);
        } else {
            assertThat(r.cell(Rung.DEVICE_NODES, HandleType.FABRIC).status()).isEqualTo(Status.SKIPPED);
            assertThat(r.verdict().code()).isEqualTo("LADDER_INCOMPLETE");
            assertThat(r.exitCode()).isEqualTo(LadderReport.OK);
        }
        assertThat(r.fake()).isTrue();
        assertThat(r.findings()).extracting("code").contains("SIMULATED");
        // Every exchange released what it made; no mount outlived its worker.
        assertThat(m.stateFiles()).isEmpty();
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain("imexprobe-ladder");
    }

    @Test
    void oneGpuSkipsTheTwoGpuRungsAndStillRunsTheChannelRungs() {
        LadderReport r = climb(FakeMachine.h200(tmp.resolve("machine")).channels(1));
        for (Rung rung : List.of(Rung.TWO_GPUS, Rung.VISIBLE_DEVICES, Rung.DEVICE_NODES)) {
            for (HandleType t : HandleType.values()) {
                Cell c = r.cell(rung, t);
                assertThat(c.status()).isEqualTo(Status.SKIPPED);
                assertThat(c.reason()).isEqualTo("needs a second GPU: the driver shows 1 GPU");
            }
        }
        assertThat(r.cell(Rung.ONE_PROCESS, HandleType.FABRIC).status()).isEqualTo(Status.PASS);
        assertThat(r.cell(Rung.TWO_PROCESSES, HandleType.POSIX_FD).status()).isEqualTo(Status.PASS);
        assertThat(r.cell(Rung.OTHER_CHANNEL, HandleType.FABRIC).failedStage().cuResultName())
                .isEqualTo("CUDA_ERROR_NOT_PERMITTED");
        assertThat(r.importerGpu()).isNull();
        assertThat(r.verdict().code()).isEqualTo("LADDER_INCOMPLETE");
        assertThat(r.verdict().evidence()).containsEntry("skippedRungs", "2, 3, 4");
        assertThat(r.exitCode()).isEqualTo(LadderReport.OK);
    }

    /** A GPU that reads HANDLE_TYPE_FABRIC_SUPPORTED=0: FABRIC is not tried on it, POSIX_FD still is. */
    @Test
    void aGpuWithoutFabricHandlesSkipsItsFabricRungsAndFails() {
        int none = java.util.concurrent.ThreadLocalRandom.current().nextInt(2);
        LadderReport r = climb(twoGpus().config("gpu." + none + ".handle_type_fabric", "0"));
        String reason = "GPU " + none + " reports HANDLE_TYPE_FABRIC_SUPPORTED=0";
        for (Rung rung : Rung.values()) {
            Cell fabric = r.cell(rung, HandleType.FABRIC);
            // never tried where it cannot work, so never a driver failure
            assertThat(fabric.status()).as(rung + " " + fabric).isIn(Status.PASS, Status.SKIPPED);
            if (fabric.status() == Status.SKIPPED && fabric.reason().contains("HANDLE_TYPE_FABRIC")) {
                assertThat(fabric.reason()).as(rung.toString()).isEqualTo(reason);
            }
        }
        // the one-GPU rungs run on the exporter's GPU 0; the two-GPU rungs need both
        assertThat(r.cell(Rung.ONE_PROCESS, HandleType.FABRIC).status())
                .isEqualTo(none == 0 ? Status.SKIPPED : Status.PASS);
        assertThat(r.cell(Rung.TWO_GPUS, HandleType.FABRIC).reason()).isEqualTo(reason);
        assertThat(r.cell(Rung.TWO_GPUS, HandleType.POSIX_FD).status()).isEqualTo(Status.PASS);
        assertThat(r.findings().getFirst().code()).isEqualTo("FABRIC_UNSUPPORTED");
        assertThat(r.findings().getFirst().cause()).startsWith("GPU " + none + " (GPU-");
        assertThat(r.exitCode()).isEqualTo(LadderReport.FAILED);
    }

    @Test
    void noChannelFailsAtRungZeroAndSkipsTheChannelRungs() {
        LadderReport r = climb(FakeMachine.h200WithoutChannel(tmp.resolve("machine")));
        Cell zero = r.cell(Rung.ONE_PROCESS, HandleType.FABRIC);
        assertThat(zero.failedStage().name().label()).isEqualTo("create");
        assertThat(zero.failedStage().cuResult()).isEqualTo(800);
        // POSIX_FD needs no IMEX channel (the fake driver's rule), so it passes where FABRIC cannot start.
        assertThat(r.cell(Rung.ONE_PROCESS, HandleType.POSIX_FD).status()).isEqualTo(Status.PASS);
        assertThat(r.cell(Rung.SAME_CHANNEL, HandleType.FABRIC).reason()).startsWith("no IMEX channel is readable");
        assertThat(r.verdict().code()).isEqualTo("LADDER_FAILS_IN_ONE_PROCESS");
        assertThat(r.exitCode()).isEqualTo(LadderReport.FAILED);
    }

    @Test
    void noDriverMeansCouldNotTell() {
        Map<String, String> env = env(FakeMachine.h200(tmp.resolve("machine")));
        env.put("IMEXPROBE_CUDA_LIBRARY", tmp.resolve("no-such-libcuda.so.1").toString());
        LadderReport r = new Ladder(WorkerLauncher.forThisJvm(env), "test-node").run(LadderOptions.defaults());
        assertThat(r.verdict().code()).isEqualTo("NO_DRIVER");
        assertThat(r.verdict().cause()).contains("no-such-libcuda.so.1");
        assertThat(r.exitCode()).isEqualTo(LadderReport.UNKNOWN);
        assertThat(r.rungs()).isEmpty();
    }

    @Test
    void aWorkerThatCannotStartIsTheLaddersErrorNotADriverResult() {
        WorkerLauncher broken = new WorkerLauncher(List.of(tmp.resolve("no-java").toString()), System.getenv());
        LadderReport r = new Ladder(broken, "test-node").run(LadderOptions.defaults());
        assertThat(r.verdict().code()).isEqualTo("LADDER_NOT_RUN");
        assertThat(r.cell(Rung.ONE_PROCESS, HandleType.FABRIC).status()).isEqualTo(Status.ERROR);
        assertThat(r.cell(Rung.ONE_PROCESS, HandleType.FABRIC).reason()).contains("could not be started")
                .contains("no-java");
        assertThat(r.exitCode()).isEqualTo(LadderReport.UNKNOWN);
    }

    /**
     * Without CAP_SYS_ADMIN (the ladder's own JVM started with every capability dropped): the namespace rung is
     * skipped with its reason, the fake's channel views still run, and stdout carries only the JSON.
     */
    @Test
    void unprivilegedTheNamespaceRungIsSkippedWithItsReason() throws Exception {
        List<String> dropper = capabilityDropper();
        assumeTrue(dropper != null, "neither setpriv nor capsh can drop CAP_SYS_ADMIN here");
        FakeMachine m = twoGpus();
        List<String> cmd = new ArrayList<>(dropper);
        cmd.addAll(List.of(NativeBuild.java(), "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), "dev.imexprobe.cli.Main", "ladder", "--json"));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(m.env());
        pb.redirectError(tmp.resolve("ladder.log").toFile());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        JsonNode r = JSON.readTree(out);

        assertThat(p.exitValue()).as("exit code; stderr: %s", Files.readString(tmp.resolve("ladder.log"))).isZero();
        assertThat(r.get("exitCode").asInt()).isZero();
        assertThat(r.get("mountNamespaces").asString()).contains("CAP_SYS_ADMIN");
        JsonNode four = rung(r, "4");
        for (JsonNode c : four.get("results")) {
            assertThat(c.get("status").asString()).isEqualTo("skipped");
            assertThat(c.get("reason").asString()).startsWith("needs CAP_SYS_ADMIN for a mount namespace");
        }
        assertThat(status(r, "3", "FABRIC")).isEqualTo("pass");
        assertThat(status(r, "3", "POSIX_FD")).isEqualTo("pass");
        assertThat(status(r, "5a", "FABRIC")).isEqualTo("pass");
        assertThat(status(r, "5b", "FABRIC")).isEqualTo("pass");
        assertThat(cell(r, "5b", "FABRIC").get("failedStage").get("cuResultName").asString())
                .isEqualTo("CUDA_ERROR_NOT_PERMITTED");
        assertThat(rung(r, "5b").get("importer").get(0).asString()).contains("only channel1")
                .contains("FAKECUDA_CHANNEL_DIR");
        // What could run passed; the rung that breaks imports on real GPUs could not run: incomplete, not passed.
        assertThat(r.get("verdict").get("code").asString()).isEqualTo("LADDER_INCOMPLETE");
        assertThat(m.stateFiles()).isEmpty();
    }

    /** A command prefix that runs its argument without CAP_SYS_ADMIN, or null when none works here. */
    static List<String> capabilityDropper() throws InterruptedException {
        for (List<String> candidate : List.of(List.of("setpriv", "--inh-caps=-all", "--bounding-set=-all"),
                List.of("capsh", "--drop=cap_sys_admin", "--", "-c", "exec \"$0\" \"$@\""))) {
            if (exit(candidate, "true") == 0 && exit(candidate, "unshare", "--mount", "true") != 0) {
                return candidate;
            }
        }
        return null;
    }

    private static int exit(List<String> prefix, String... command) throws InterruptedException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(command));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    private static JsonNode rung(JsonNode report, String label) {
        for (JsonNode r : report.get("rungs")) {
            if (r.get("rung").asString().equals(label)) {
                return r;
            }
        }
        throw new AssertionError("no rung " + label + " in " + report);
    }

    private static JsonNode cell(JsonNode report, String rung, String type) {
        for (JsonNode c : rung(report, rung).get("results")) {
            if (c.get("handleType").asString().equals(type)) {
                return c;
            }
        }
        throw new AssertionError("no " + type + " on rung " + rung);
    }

    private static String status(JsonNode report, String rung, String type) {
        return cell(report, rung, type).get("status").asString();
    }
}
