package dev.imexprobe.cli;

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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** `check` as a user runs it: a separate JVM, the real shim, exit codes 0 / 1 / 2 and valid JSON on stdout. */
class CheckCommandIT {

    @TempDir
    Path tmp;

    record Run(int exit, String stdout, String stderr) {
        JsonNode json() {
            return JsonMapper.builder().build().readTree(stdout);
        }
    }

    static Run check(Map<String, String> env, Path tmp, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(NativeBuild.java(), "--enable-native-access=ALL-UNNAMED",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "dev.imexprobe.cli.Main", "check"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("FAKECUDA_") || k.startsWith("IMEXPROBE_"));
        pb.environment().putAll(env);
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("check finished").isTrue();
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void noDriverLibraryMeansExit2AndAClearReason() throws Exception {
        Run text = check(Map.of("IMEXPROBE_CUDA_LIBRARY", tmp.resolve("absent/libcuda.so.1").toString(),
                "IMEXPROBE_NVML_LIBRARY", tmp.resolve("absent/libnvidia-ml.so.1").toString()), tmp);
        assertThat(text.exit()).isEqualTo(2);
        assertThat(text.stdout()).contains("no NVIDIA driver library found").contains("verdict: UNKNOWN (exit 2)");
        assertThat(text.stdout()).doesNotContain("Exception").doesNotContain("\tat ");
        Run json = check(Map.of("IMEXPROBE_CUDA_LIBRARY", tmp.resolve("absent/libcuda.so.1").toString()), tmp, "--json");
        assertThat(json.exit()).isEqualTo(2);
        JsonNode doc = json.json();
        assertThat(doc.get("exitCode").asInt()).isEqualTo(2);
        assertThat(doc.get("driver").get("loaded").asBoolean()).isFalse();
        assertThat(doc.get("findings").get(0).get("code").asString()).isEqualTo("NO_DRIVER");
        assertThat(doc.get("selfProbe")).isEmpty();
    }

    @Test
    void healthyFakeH200PassesWithInfoFindingsOnly() throws Exception {
        FakeMachine m = FakeMachine.h200(tmp);
        Run run = check(m.env(), tmp, "--json");
        assertThat(run.exit()).as(run.stderr()).isZero();
        JsonNode doc = run.json();
        assertThat(doc.get("fake").asBoolean()).isTrue();
        assertThat(doc.get("gpus")).hasSize(1);
        assertThat(doc.get("usableChannels").asLong()).isEqualTo(1);
        JsonNode probe = doc.get("selfProbe").get(0);
        assertThat(probe.get("verdict").asString()).isEqualTo("pass");
        assertThat(probe.get("stages")).hasSize(10);
        List<String> codes = new ArrayList<>();
        doc.get("findings").forEach(f -> {
            codes.add(f.get("code").asString());
            assertThat(f.get("severity").asString()).isEqualTo("info");
        });
        assertThat(codes).contains("SIMULATED", "FABRIC_NOT_SUPPORTED", "IMEX_DAEMON_ABSENT");
        assertThat(m.stateFiles()).isEmpty();
    }

    @Test
    void noChannelIsAProblemWithCreateNotPermitted() throws Exception {
        FakeMachine m = FakeMachine.h200WithoutChannel(tmp);
        Run run = check(m.env(), tmp, "--json");
        assertThat(run.exit()).isEqualTo(1);
        JsonNode doc = run.json();
        List<String> codes = new ArrayList<>();
        doc.get("findings").forEach(f -> codes.add(f.get("code").asString()));
        assertThat(codes).contains("NO_IMEX_CHANNEL", "CREATE_NOT_PERMITTED");
        JsonNode create = doc.get("selfProbe").get(0).get("stages").get(0);
        assertThat(create.get("name").asString()).isEqualTo("create");
        assertThat(create.get("cuResult").asInt()).isEqualTo(800);
        Run text = check(m.env(), tmp);
        assertThat(text.exit()).isEqualTo(1);
        assertThat(text.stdout()).contains("CUDA_ERROR_NOT_PERMITTED").contains("[error] NO_IMEX_CHANNEL");
    }

    @Test
    void aGpuWithoutFabricHandlesIsAProblemAndIsNotTouched() throws Exception {
        int none = java.util.concurrent.ThreadLocalRandom.current().nextInt(2);
        FakeMachine m = FakeMachine.h200(tmp).gpus(2).config("gpu." + none + ".handle_type_fabric", "0");
        Map<String, String> env = m.env();
        Path contexts = tmp.resolve("contexts.log");
        env.put("FAKECUDA_CONTEXT_LOG", contexts.toString());
        Run run = check(env, tmp, "--json");
        assertThat(run.exit()).as(run.stdout()).isEqualTo(1);
        JsonNode doc = run.json();
        List<String> errors = new ArrayList<>();
        doc.get("findings").forEach(f -> {
            if (f.get("severity").asString().equals("error")) {
                errors.add(f.get("code").asString() + "@" + f.get("evidence").get("gpu").asInt());
            }
        });
        assertThat(errors).containsExactly("FABRIC_UNSUPPORTED@" + none);
        // the other GPU is probed and passes; no context is made on the one that cannot take FABRIC handles
        assertThat(doc.get("selfProbe")).hasSize(1);
        assertThat(doc.get("selfProbe").get(0).get("gpu").asInt()).isEqualTo(1 - none);
        assertThat(doc.get("selfProbe").get(0).get("verdict").asString()).isEqualTo("pass");
        assertThat(Files.readAllLines(contexts)).contains("create " + (1 - none)).doesNotContain("create " + none);
        Run text = check(env, tmp);
        assertThat(text.exit()).isEqualTo(1);
        assertThat(text.stdout()).contains("[error] FABRIC_UNSUPPORTED: GPU " + none + " (GPU-");
    }

    /** Beside a job that has filled a GPU, check takes no context there unless told to (IMEXPROBE_DRIVER_MINFREEMEMORY). */
    @Test
    void aGpuAJobHasFilledIsLeftToTheJob() throws Exception {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        int busy = random.nextInt(2);
        // MiB, below the default 4 GiB; half the time less than the self-probe's 2 MiB allocation
        long free = random.nextBoolean() ? 1 : 2 + random.nextInt(4094);
        FakeMachine m = FakeMachine.h200(tmp).gpus(2).config("gpu." + busy + ".memory_used_mib",
                Long.toString(143771 - free));
        Map<String, String> env = m.env();
        Path contexts = tmp.resolve("busy-contexts.log");
        env.put("FAKECUDA_CONTEXT_LOG", contexts.toString());
        Run run = check(env, tmp, "--json");
        assertThat(run.exit()).as(run.stdout()).isZero();
        JsonNode doc = run.json();
        assertThat(doc.get("selfProbe")).hasSize(1);
        assertThat(doc.get("selfProbe").get(0).get("gpu").asInt()).isEqualTo(1 - busy);
        List<JsonNode> filled = new ArrayList<>();
        doc.get("findings").forEach(f -> {
            if (f.get("code").asString().equals("GPU_MEMORY_IN_USE")) {
                filled.add(f);
            }
        });
        assertThat(filled).hasSize(1);
        assertThat(filled.getFirst().get("severity").asString()).isEqualTo("info");
        assertThat(filled.getFirst().get("evidence").get("gpu").asInt()).isEqualTo(busy);
        assertThat(filled.getFirst().get("evidence").get("freeMiB").asLong()).isEqualTo(free);
        assertThat(FakeMachine.contextsCreated(contexts)).containsExactly("create " + (1 - busy));

        env.put("IMEXPROBE_DRIVER_MINFREEMEMORY", "0");
        Run off = check(env, tmp, "--json");
        assertThat(off.exit()).as(off.stdout()).isZero();
        assertThat(off.json().get("selfProbe")).hasSize(2);
        assertThat(off.json().get("findings").findValuesAsString("code")).doesNotContain("GPU_MEMORY_IN_USE");
        JsonNode onBusy = off.json().get("selfProbe").get(busy);
        if (free >= 2) {
            assertThat(onBusy.get("verdict").asString()).as(onBusy.toString()).isEqualTo("pass");
        } else {
            // the 2 MiB do not fit (an H100 beside such a job: cuMemCreate 2): not probed, and exit 0 as above
            assertThat(onBusy.get("verdict").asString()).as(onBusy.toString()).isEqualTo("not_probed");
            assertThat(onBusy.get("finding").get("code").asString()).isEqualTo("GPU_OUT_OF_MEMORY");
            assertThat(onBusy.get("finding").get("severity").asString()).isEqualTo("info");
        }

        env.put("IMEXPROBE_DRIVER_MINFREEMEMORY", "plenty");
        Run bad = check(env, tmp);
        assertThat(bad.exit()).isEqualTo(64);
        assertThat(bad.stdout()).isEmpty();
        assertThat(bad.stderr()).contains("check: IMEXPROBE_DRIVER_MINFREEMEMORY must be a size such as 4GB, 512MB or 0, "
                + "got 'plenty'");
    }

    @Test
    void noVisibleGpuIsExit2() throws Exception {
        FakeMachine m = FakeMachine.h200(tmp);
        Map<String, String> env = m.env();
        env.put("CUDA_VISIBLE_DEVICES", "");
        Run run = check(env, tmp, "--json");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.json().get("findings").toString()).contains("NO_GPU");
        // NVML ignores CUDA_VISIBLE_DEVICES: the GPU is still listed, and the table says so.
        assertThat(run.json().get("driver").get("nvmlGpus")).hasSize(1);
        Run text = check(env, tmp);
        assertThat(text.exit()).isEqualTo(2);
        assertThat(text.stdout()).contains("visible    CUDA_VISIBLE_DEVICES= (CUDA shows 0 of the 1 GPUs NVML reaches here)");
    }

    @Test
    void repeatLoopsInOneProcessAndLeavesNothingBehind() throws Exception {
        FakeMachine m = FakeMachine.h200(tmp).gpus(2);
        Run run = check(m.env(), tmp, "--json", "--repeat", "25");
        assertThat(run.exit()).as(run.stderr()).isZero();
        JsonNode repeat = run.json().get("repeat");
        assertThat(repeat).hasSize(2);
        for (JsonNode r : repeat) {
            assertThat(r.get("runs").asInt()).isEqualTo(25);
            assertThat(r.get("passed").asInt()).isEqualTo(25);
            assertThat(r.get("liveAllocationsAfter").asLong()).isZero();
            assertThat(r.get("gpuMemoryFreeAfter").asLong()).isEqualTo(r.get("gpuMemoryFreeBefore").asLong());
        }
        assertThat(m.stateFiles()).isEmpty();
    }

    @Test
    void badOptionsAreAUsageError() throws Exception {
        assertThat(check(Map.of(), tmp, "--repeat", "zero").exit()).isEqualTo(64);
        assertThat(check(Map.of(), tmp, "--frobnicate").stderr()).contains("unknown option '--frobnicate'");
        // a second --repeat used to win over the first without a word
        Run twice = check(Map.of(), tmp, "--repeat", "2", "--json", "--repeat=3");
        assertThat(twice.exit()).isEqualTo(64);
        assertThat(twice.stderr()).startsWith("check: --repeat is given twice; give it once");
        assertThat(twice.stdout()).isEmpty();
    }

    /**
     * A size the GPU cannot allocate is the request's fault, not the node's: without this check the self-probe's
     * create failed with INVALID_VALUE and the node was reported as a DRIVER_ERROR (exit 1).
     */
    @Test
    void aSizeThatIsNotAMultipleOfTheGranularityIsAUsageErrorNotADriverError() throws Exception {
        FakeMachine m = FakeMachine.h200(tmp).gpus(1);
        long granularity = 2L << 20;
        long size = granularity * (1 + new Random().nextInt(8)) + 1 + new Random().nextInt((int) granularity - 1);
        Run run = check(m.env(), tmp, "--size", Long.toString(size));
        assertThat(run.exit()).as(run.stdout()).isEqualTo(64);
        assertThat(run.stderr()).startsWith("check: --size: " + size + " bytes is not a multiple of GPU 0's allocation"
                + " granularity (" + granularity + " bytes)");
        assertThat(run.stdout()).doesNotContain("DRIVER_ERROR");
        assertThat(m.stateFiles()).isEmpty();
        Run ok = check(m.env(), tmp, "--json", "--size", Long.toString(granularity * 3));
        assertThat(ok.exit()).as(ok.stderr()).isZero();
        assertThat(ok.json().get("selfProbe").get(0).get("sizeBytes").asLong()).isEqualTo(granularity * 3);
    }
}
