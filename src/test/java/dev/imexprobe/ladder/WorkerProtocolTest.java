package dev.imexprobe.ladder;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.json.Json;
import dev.imexprobe.ladder.WorkerReply.DoneReply;
import dev.imexprobe.ladder.WorkerReply.ListenReply;
import dev.imexprobe.ladder.WorkerReply.NodeReply;
import dev.imexprobe.ladder.WorkerReply.StageReply;
import dev.imexprobe.ladder.WorkerReply.StagesReply;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The worker protocol's records as they travel: the ladder writes what the worker reads, and back. */
class WorkerProtocolTest {

    private static String json(Object value) {
        return Json.MAPPER.writeValueAsString(value);
    }

    @Test
    void everyRequestTravelsWithItsOpAndReadsBackAsItself() {
        List<WorkerRequest<?>> requests = List.of(new WorkerRequest.Node(), new WorkerRequest.View(),
                new WorkerRequest.Info(), new WorkerRequest.Export(1, 4096L, 7L, HandleType.POSIX_FD),
                new WorkerRequest.SendFd("/tmp/a.sock"), new WorkerRequest.Listen("/tmp/a.sock"),
                new WorkerRequest.ImportFd(4096L, 1, 7L, 8L), new WorkerRequest.Import("AAAA", 4096L, 2, 7L, null),
                new WorkerRequest.Verify(-5L), new WorkerRequest.Release(),
                new WorkerRequest.SelfProbe(3, 8192L, HandleType.FABRIC, null, 9L), new WorkerRequest.Exit());
        List<String> ops = requests.stream().map(r -> Json.MAPPER.readTree(json(r)).path("op").asString()).toList();
        assertThat(ops).containsExactly("node", "view", "info", "export", "sendFd", "listen", "importFd", "import",
                "verify", "release", "selfProbe", "exit");
        assertThat(requests.stream().map(WorkerRequest::op).toList()).isEqualTo(ops);
        for (WorkerRequest<?> r : requests) {
            assertThat(Json.MAPPER.readValue(json(r), WorkerRequest.class)).as(json(r)).isEqualTo(r);
        }
        assertThat(Json.MAPPER.readTree(json(new WorkerRequest.Import("AAAA", 4096L, 2, 7L, null))))
                .isEqualTo(Json.MAPPER.readTree("{\"op\":\"import\",\"handle\":\"AAAA\",\"sizeBytes\":4096,\"gpu\":2,"
                        + "\"seed\":7}"));
    }

    @Test
    void absentFieldsTakeTheProtocolsDefaults() {
        assertThat(Json.MAPPER.readValue("{\"op\":\"export\"}", WorkerRequest.class))
                .isEqualTo(new WorkerRequest.Export(0, 2L << 20, 0L, HandleType.FABRIC));
        assertThat(Json.MAPPER.readValue("{\"op\":\"import\",\"handle\":\"h\"}", WorkerRequest.class))
                .isEqualTo(new WorkerRequest.Import("h", 2L << 20, 0, null, null));
        assertThat(Json.MAPPER.readValue("{\"op\":\"selfProbe\",\"handleType\":\"POSIX_FD\"}", WorkerRequest.class))
                .isEqualTo(new WorkerRequest.SelfProbe(0, 2L << 20, HandleType.POSIX_FD, null, null));
    }

    @Test
    void aRefusalReadsAsAnyReply() {
        String refusal = json(new DoneReply(false, "IllegalStateException: nothing exported"));
        assertThat(refusal).isEqualTo("{\"ok\":false,\"error\":\"IllegalStateException: nothing exported\"}");
        StagesReply stages = Json.MAPPER.readValue(refusal, StagesReply.class);
        assertThat(stages.ok()).isFalse();
        assertThat(stages.stages()).isNull();
        assertThat(stages.error()).isEqualTo("IllegalStateException: nothing exported");
        assertThat(Json.MAPPER.readValue(refusal, StageReply.class).stage()).isNull();
        assertThat(Json.MAPPER.readValue(refusal, ListenReply.class)).isEqualTo(new ListenReply(false, null,
                "IllegalStateException: nothing exported"));
    }

    @Test
    void theNodesGpusReachTheLadderWithTheirHandleTypes() {
        GpuDevice gpu = new GpuDevice(1, "GPU-b", "H200", "0000:02:00.0", Map.of("fabric", 1,
                "posixFileDescriptor", 0), 2L << 20, null, null, null, null);
        NodeReply read = Json.MAPPER.readValue(json(new NodeReply(true, "CUDA_SUCCESS", List.of(gpu),
                Map.of("root", "/tmp/f"), null, "libcuda.so.1", null)), NodeReply.class);
        Ladder.GpuInfo info = Ladder.GpuInfo.of(read.gpus().getFirst());
        assertThat(info).isEqualTo(new Ladder.GpuInfo(1, "GPU-b", "0000:02:00.0", true, false, 2L << 20));
        assertThat(read.fake()).containsEntry("root", "/tmp/f");
        assertThat(read.driverProblem()).isNull();
    }

    @Test
    void theWorkerRefusesAnUnknownOpAndKeepsServing() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        String in = "{\"op\":\"frobnicate\"}\n{\"gpu\":0}\n{\"op\":\"verify\",\"seed\":1}\n{\"op\":\"exit\"}\n"
                + "{\"op\":\"node\"}\n";
        new Worker(null, null).serve(new BufferedReader(new StringReader(in)),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly(
                "{\"ok\":false,\"error\":\"unknown op 'frobnicate'\"}",
                "{\"ok\":false,\"error\":\"the request names no op\"}",
                "{\"ok\":false,\"error\":\"IllegalStateException: nothing exported\"}",
                "{\"ok\":true}");
    }
}
