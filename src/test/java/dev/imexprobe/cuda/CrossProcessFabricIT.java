package dev.imexprobe.cuda;

import dev.imexprobe.ladder.WorkerRequest;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.WorkerProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Export in one process, import in another, through the real shim and the fake driver: the rules measured on
 * the H200 (channels, released and garbled handles) and on two H200s (the seed's hidden device node).
 */
class CrossProcessFabricIT {

    private static final long SIZE = 2L << 20;

    @TempDir
    Path tmp;

    static String stage(JsonNode reply, String name, String field) {
        for (JsonNode s : reply.get("stages")) {
            if (s.get("name").asString().equals(name)) {
                return s.has(field) ? s.get(field).asString() : null;
            }
        }
        throw new AssertionError("no stage " + name + " in " + reply);
    }

    @Test
    void exportInOneProcessImportInAnotherReadsAndWritesTheSameMemory() {
        FakeMachine m = FakeMachine.h200(tmp);
        long seed = new Random().nextLong();
        long writeback = new Random().nextLong();
        try (WorkerProcess exporter = WorkerProcess.start(m.env(), tmp.resolve("exporter.log"));
             WorkerProcess importer = WorkerProcess.start(m.env(), tmp.resolve("importer.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, seed, null));
            assertThat(e.get("ok").asBoolean()).as("export %s", e).isTrue();
            assertThat(Base64.getDecoder().decode(e.get("handle").asString())).hasSize(64);
            assertThat(m.stateFiles()).hasSize(1);

            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, seed,
                    writeback));
            assertThat(i.get("ok").asBoolean()).as("import %s", i).isTrue();
            for (String s : List.of("import", "reserve", "map", "access", "verify", "writeback", "release")) {
                assertThat(stage(i, s, "status")).as(s).isEqualTo("ok");
            }
            assertThat(stage(i, "import", "cuResultName")).isEqualTo("CUDA_SUCCESS");

            // The importer's write must be visible in the exporter's own mapping, and only that pattern.
            assertThat(exporter.request(new WorkerRequest.Verify(writeback)).get("ok").asBoolean()).isTrue();
            assertThat(exporter.request(new WorkerRequest.Verify(writeback + 1)).get("stage").get("status")
                    .asString()).isEqualTo("failed");

            assertThat(exporter.request(new WorkerRequest.Release()).get("ok").asBoolean()).isTrue();
            assertThat(m.stateFiles()).isEmpty();
            assertThat(exporter.request(new WorkerRequest.Info()).get("liveAllocations").asInt()).isZero();
            assertThat(importer.request(new WorkerRequest.Info()).get("liveAllocations").asInt()).isZero();
        }
    }

    @Test
    void wrongSeedFailsVerifyWithPatternMismatchNotADriverError() {
        FakeMachine m = FakeMachine.h200(tmp);
        try (WorkerProcess exporter = WorkerProcess.start(m.env(), tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(m.env(), tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 7L, null));
            JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 8L, null));
            assertThat(stage(i, "verify", "status")).isEqualTo("failed");
            assertThat(stage(i, "verify", "cuResultName")).isEqualTo("CUDA_SUCCESS");
            assertThat(stage(i, "verify", "detail")).contains("pattern mismatch at byte 0");
            assertThat(stage(i, "release", "status")).isEqualTo("ok");
        }
    }

    @Test
    void createWithoutAnyChannelIsNotPermitted() {
        FakeMachine m = FakeMachine.h200WithoutChannel(tmp);
        try (WorkerProcess exporter = WorkerProcess.start(m.env(), tmp.resolve("e.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 1L, null));
            assertThat(e.get("ok").asBoolean()).isFalse();
            assertThat(stage(e, "create", "cuResultName")).isEqualTo("CUDA_ERROR_NOT_PERMITTED");
            assertThat(stage(e, "export", "status")).isEqualTo("skipped");
            assertThat(m.stateFiles()).isEmpty();
        }
    }

    /** Channels seen per process (exporter → importer) and the import result measured on the H200. */
    @Test
    void importNeedsTheExportersLowestChannelAsMeasured() {
        record Row(int[] exporter, int[] importer, String expected) {
        }
        List<Row> rows = List.of(
                new Row(new int[] {0, 1}, new int[] {1}, "CUDA_ERROR_NOT_PERMITTED"),
                new Row(new int[] {1}, new int[] {0, 1}, "CUDA_SUCCESS"),
                new Row(new int[] {0}, new int[] {0, 1}, "CUDA_SUCCESS"),
                new Row(new int[] {0, 1}, new int[] {0}, "CUDA_SUCCESS"),
                new Row(new int[] {0}, new int[] {1}, "CUDA_ERROR_NOT_PERMITTED"),
                new Row(new int[] {2047}, new int[] {2047}, "CUDA_SUCCESS"),
                new Row(new int[] {0}, new int[] {}, "CUDA_ERROR_NOT_PERMITTED"));
        FakeMachine m = FakeMachine.h200WithoutChannel(tmp);
        int n = 0;
        for (Row row : rows) {
            n++;
            Path ev = m.channelView("e" + n, row.exporter());
            Path iv = m.channelView("i" + n, row.importer());
            try (WorkerProcess exporter = WorkerProcess.start(m.env(ev), tmp.resolve("e" + n + ".log"));
                 WorkerProcess importer = WorkerProcess.start(m.env(iv), tmp.resolve("i" + n + ".log"))) {
                JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 3L, null));
                assertThat(e.get("ok").asBoolean()).as("export with %s", java.util.Arrays.toString(row.exporter()))
                        .isTrue();
                JsonNode i = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 3L, null));
                assertThat(stage(i, "import", "cuResultName")).as("%s → %s",
                        java.util.Arrays.toString(row.exporter()), java.util.Arrays.toString(row.importer()))
                        .isEqualTo(row.expected());
            }
        }
        assertThat(m.stateFiles()).isEmpty();
    }

    @Test
    void garbledReleasedAndOrphanedHandlesAreRejectedWith801() {
        FakeMachine m = FakeMachine.h200(tmp);
        Random random = new Random();
        try (WorkerProcess exporter = WorkerProcess.start(m.env(), tmp.resolve("e.log"));
             WorkerProcess importer = WorkerProcess.start(m.env(), tmp.resolve("i.log"))) {
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 5L, null));
            byte[] good = Base64.getDecoder().decode(e.get("handle").asString());
            for (int k = 0; k < 20; k++) {
                byte[] bad = k % 2 == 0 ? mutate(good, random) : randomBytes(random);
                assertThat(bad).as("a handle that differs from the good one").isNotEqualTo(good);
                JsonNode i = importer.request(new WorkerRequest.Import(Base64.getEncoder().encodeToString(bad), SIZE, 0,
                        null, null));
                assertThat(stage(i, "import", "cuResultName")).isEqualTo("CUDA_ERROR_NOT_SUPPORTED");
            }
            exporter.request(new WorkerRequest.Release());
            JsonNode released = importer.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, null,
                    null));
            assertThat(stage(released, "import", "cuResultName")).isEqualTo("CUDA_ERROR_NOT_SUPPORTED");

            // An exporter that dies: its handle dies with it.
            try (WorkerProcess doomed = WorkerProcess.start(m.env(), tmp.resolve("d.log"))) {
                JsonNode d = doomed.request(new WorkerRequest.Export(0, SIZE, 9L, null));
                doomed.kill();
                JsonNode orphan = importer.request(new WorkerRequest.Import(d.get("handle").asString(), SIZE, 0, 9L,
                        null));
                assertThat(stage(orphan, "import", "cuResultName")).isEqualTo("CUDA_ERROR_NOT_SUPPORTED");
            }
            assertThat(importer.request(new WorkerRequest.Info()).get("liveAllocations").asInt()).isZero();
        }
    }

    @Test
    void aContainerWithoutTheExportersGpuDeviceNodeCannotImportButCudaVisibleDevicesAloneCan() {
        // As measured on two H200s (driver 580.159.04, docs/gpu-validation.md "Seed scenario on two GPUs").
        FakeMachine m = FakeMachine.twoGpus(tmp);
        Map<String, String> visibleOnly = m.env();
        visibleOnly.put("CUDA_VISIBLE_DEVICES", "1");
        try (WorkerProcess exporter = WorkerProcess.start(m.containerEnv(0), tmp.resolve("e.log"));
             WorkerProcess container = WorkerProcess.start(m.containerEnv(1), tmp.resolve("i.log"));
             WorkerProcess visible = WorkerProcess.start(visibleOnly, tmp.resolve("v.log"));
             WorkerProcess both = WorkerProcess.start(m.env(), tmp.resolve("both.log"))) {
            JsonNode node = container.request(new WorkerRequest.Node());
            assertThat(node.get("gpus")).hasSize(1);
            assertThat(node.get("gpus").get(0).get("uuid").asString())
                    .isEqualTo(both.request(new WorkerRequest.Node()).get("gpus").get(1).get("uuid").asString());
            JsonNode e = exporter.request(new WorkerRequest.Export(0, SIZE, 11L, null));
            JsonNode i = container.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 11L, null));
            assertThat(stage(i, "import", "cuResultName")).isEqualTo("CUDA_ERROR_NOT_SUPPORTED");
            // CUDA_VISIBLE_DEVICES alone (both device nodes present) imports, and so does a process seeing both.
            JsonNode v = visible.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 0, 11L, null));
            assertThat(v.get("ok").asBoolean()).as("%s", v).isTrue();
            JsonNode ok = both.request(new WorkerRequest.Import(e.get("handle").asString(), SIZE, 1, 11L, null));
            assertThat(ok.get("ok").asBoolean()).as("%s", ok).isTrue();
        }
    }

    @Test
    void enumerationFollowsCudaVisibleDevicesAndDecodesFabricInfo() {
        String cluster = "5a1c0e9d-1111-2222-3333-444455556666";
        FakeMachine m = FakeMachine.h200(tmp).gpus(4).fabric(2, 3, cluster, 17);
        Map<String, String> env = m.env();
        env.put("CUDA_VISIBLE_DEVICES", "2,0");
        try (WorkerProcess all = WorkerProcess.start(m.env(), tmp.resolve("all.log"));
             WorkerProcess some = WorkerProcess.start(env, tmp.resolve("some.log"))) {
            JsonNode four = all.request(new WorkerRequest.Node()).get("gpus");
            assertThat(four).hasSize(4);
            JsonNode two = some.request(new WorkerRequest.Node()).get("gpus");
            assertThat(two).hasSize(2);
            assertThat(two.get(0).get("uuid").asString()).isEqualTo(four.get(2).get("uuid").asString());
            assertThat(two.get(1).get("uuid").asString()).isEqualTo(four.get(0).get("uuid").asString());
            JsonNode f = two.get(0).get("fabric");
            assertThat(f.get("stateName").asString()).isEqualTo("COMPLETED");
            assertThat(f.get("clusterUuid").asString()).isEqualTo(cluster);
            assertThat(f.get("cliqueId").asLong()).isEqualTo(17);
            assertThat(f.get("structVersion").asInt()).isEqualTo(3);
            assertThat(two.get(1).get("fabric").get("stateName").asString()).isEqualTo("NOT_SUPPORTED");
            JsonNode attrs = four.get(0).get("attributes");
            assertThat(attrs.get("fabric").asInt()).isEqualTo(1);
            assertThat(attrs.get("multicast").asInt()).isZero();
            assertThat(four.get(0).get("granularityBytes").asLong()).isEqualTo(SIZE);
        }
    }

    /** 1-4 flipped bits, all different: two flips of one bit would cancel and give the good handle back. */
    private static byte[] mutate(byte[] good, Random r) {
        byte[] b = good.clone();
        int flips = 1 + r.nextInt(4);
        r.ints(0, b.length * 8).distinct().limit(flips).forEach(bit -> b[bit / 8] ^= (byte) (1 << (bit % 8)));
        return b;
    }

    private static byte[] randomBytes(Random r) {
        byte[] b = new byte[64];
        r.nextBytes(b);
        return b;
    }
}
