package dev.imexprobe.ladder;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.FdPassing;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.GpuInventory;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.LiveAllocations;
import dev.imexprobe.probe.AccessStage;
import dev.imexprobe.probe.CreateStage;
import dev.imexprobe.probe.ExportStage;
import dev.imexprobe.probe.ImportStage;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.MapStage;
import dev.imexprobe.probe.ProbeStage;
import dev.imexprobe.probe.ProbeSession;
import dev.imexprobe.probe.ReleaseStage;
import dev.imexprobe.probe.ReserveStage;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.TransferStage;
import dev.imexprobe.probe.VerifyStage;
import dev.imexprobe.probe.WritebackStage;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One side of an exchange in its own process, driven over stdin/stdout with one JSON object per line. The
 * ladder starts an exporter and an importer worker under growing isolation (CUDA_VISIBLE_DEVICES, mount
 * namespaces, channel views) and asks each for its half; tests drive the same protocol. No Spring, fast start.
 *
 * <p>Requests: {@code node}, {@code export} (gpu, sizeBytes, seed, handleType), {@code sendFd} (socket),
 * {@code listen} (socket), {@code importFd} (sizeBytes, gpu, seed, writebackSeed), {@code import} (handle,
 * sizeBytes, gpu, seed, writebackSeed), {@code verify} (seed), {@code release}, {@code info}, {@code exit};
 * for the ladder also {@code view} (what this process sees: {@link ProcessView}) and {@code selfProbe} (gpu,
 * sizeBytes, handleType, seed, writebackSeed: the whole exchange inside this process, rung 0).
 * Every answer carries {@code op} and {@code ok}; a bad request gets {@code ok:false} and an {@code error}.
 */
public final class Worker {

    private static final int FD_TIMEOUT_MILLIS = 10_000;

    /** Rung 0: every stage in this one process, as the self-probe, for either handle type. */
    private static final List<ProbeStage> IN_PROCESS = List.of(new CreateStage(), new ExportStage(),
            TransferStage.inProcess(), new ImportStage(), new ReserveStage(), new MapStage(), new AccessStage(),
            new VerifyStage(), new WritebackStage(WritebackStage.Side.BOTH), new ReleaseStage());

    private final CudaDriver driver;
    private final StageEngine engine;
    private final JsonMapper json;
    private ProbeSession exported;
    private int listeningSocket = -1;

    public Worker(CudaDriver driver, StageEngine engine, JsonMapper json) {
        this.driver = driver;
        this.engine = engine;
        this.json = json;
    }

    /** Serves requests until {@code exit} or end of input; releases whatever it still holds. */
    public void serve(BufferedReader in, PrintStream out) throws IOException {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                Map<String, Object> reply;
                try {
                    JsonNode request = json.readTree(line);
                    String op = request.path("op").asString("");
                    if (op.equals("exit")) {
                        out.println(json.writeValueAsString(Map.of("op", "exit", "ok", true)));
                        out.flush();
                        return;
                    }
                    reply = handle(op, request);
                } catch (RuntimeException e) {
                    reply = new LinkedHashMap<>();
                    reply.put("ok", false);
                    reply.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                out.println(json.writeValueAsString(reply));
                out.flush();
            }
        } finally {
            releaseExport();
            if (listeningSocket >= 0) {
                FdPassing.close(listeningSocket);
            }
        }
    }

    Map<String, Object> handle(String op, JsonNode r) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("op", op);
        switch (op) {
            case "node" -> {
                GpuInventory inv = GpuInventory.scan(driver);
                reply.put("ok", inv.init().ok());
                reply.put("init", inv.init().name());
                reply.put("gpus", inv.gpus());
                reply.put("fake", driver.status().fake());
                // Why nothing loaded, in the driver status's words (the ladder reports it as NO_DRIVER).
                reply.put("driverProblem", driver.status().unavailableReason());
                reply.put("library", driver.status().cudaLibrary());
            }
            case "export" -> {
                releaseExport();
                HandleType type = HandleType.parse(r.path("handleType").asString("FABRIC"));
                if (type == null) {
                    throw new IllegalArgumentException("handleType must be FABRIC or POSIX_FD");
                }
                exported = new ProbeSession(driver, type, r.path("sizeBytes").asLong(2L << 20),
                        r.path("seed").asLong(), null, r.path("gpu").asInt(0), -1);
                List<StageResult> stages = new ArrayList<>(engine.run(exported,
                        List.of(new CreateStage(), new ExportStage())));
                boolean ok = StageEngine.passed(stages);
                if (ok && type == HandleType.FABRIC) {
                    reply.put("handle", exported.fabricHandle().base64());
                }
                if (!ok) {
                    stages.addAll(engine.run(exported, List.of(new ReleaseStage())));
                    exported = null;
                }
                reply.put("ok", ok);
                reply.put("stages", stages);
            }
            case "sendFd" -> {
                long start = System.nanoTime();
                int rc = exported == null || exported.exportedFd() < 0 ? -1
                        : FdPassing.sendFd(r.path("socket").asString(), exported.exportedFd(), FD_TIMEOUT_MILLIS);
                reply.put("ok", rc == 0);
                reply.put("stage", TransferStage.of(rc == 0 ? StageStatus.OK : StageStatus.FAILED,
                        System.nanoTime() - start, rc == 0 ? "descriptor sent over a Unix socket (SCM_RIGHTS)"
                                : rc < 0 ? "nothing exported as POSIX_FD" : "sendmsg failed: errno " + rc));
            }
            case "listen" -> {
                int[] fd = new int[1];
                int rc = FdPassing.listen(r.path("socket").asString(), fd);
                listeningSocket = rc == 0 ? fd[0] : -1;
                reply.put("ok", rc == 0);
                reply.put("errno", rc);
            }
            case "importFd" -> {
                int[] fd = new int[1];
                int rc = listeningSocket < 0 ? -1 : FdPassing.acceptFd(listeningSocket, FD_TIMEOUT_MILLIS, fd);
                if (listeningSocket >= 0) {
                    FdPassing.close(listeningSocket);
                    listeningSocket = -1;
                }
                if (rc != 0) {
                    reply.put("ok", false);
                    reply.put("error", rc < 0 ? "not listening" : "no descriptor arrived: errno " + rc);
                    break;
                }
                List<StageResult> stages = new Importer(driver, engine).importPosixFd(fd[0],
                        r.path("sizeBytes").asLong(2L << 20), r.path("gpu").asInt(0), seed(r, "seed"),
                        seed(r, "writebackSeed"));
                reply.put("ok", StageEngine.passed(stages));
                reply.put("stages", stages);
            }
            case "import" -> {
                FabricHandle handle = FabricHandle.fromBase64(r.path("handle").asString());
                List<StageResult> stages = new Importer(driver, engine).importFabric(handle,
                        r.path("sizeBytes").asLong(2L << 20), r.path("gpu").asInt(0), seed(r, "seed"),
                        seed(r, "writebackSeed"));
                reply.put("ok", StageEngine.passed(stages));
                reply.put("stages", stages);
            }
            case "verify" -> {
                if (exported == null) {
                    throw new IllegalStateException("nothing exported");
                }
                ProbeSession check = exported.withWritebackSeed(r.path("seed").asLong());
                StageResult stage = engine.run(check, List.of(new WritebackStage(WritebackStage.Side.CHECK))).getFirst();
                reply.put("ok", stage.ok());
                reply.put("stage", stage);
            }
            case "release" -> {
                StageResult stage = releaseExport();
                reply.put("ok", stage == null || stage.ok());
                reply.put("stage", stage);
            }
            case "view" -> {
                reply.put("ok", true);
                reply.put("view", ProcessView.inspect(driver));
            }
            case "selfProbe" -> {
                HandleType type = HandleType.parse(r.path("handleType").asString("FABRIC"));
                if (type == null) {
                    throw new IllegalArgumentException("handleType must be FABRIC or POSIX_FD");
                }
                int gpu = r.path("gpu").asInt(0);
                Long seed = seed(r, "seed");
                Long writeback = seed(r, "writebackSeed");
                ProbeSession session = new ProbeSession(driver, type, r.path("sizeBytes").asLong(2L << 20),
                        seed != null ? seed : Seeds.next(), writeback != null ? writeback : Seeds.next(), gpu, gpu);
                List<StageResult> stages = engine.run(session, IN_PROCESS);
                reply.put("ok", StageEngine.passed(stages));
                reply.put("stages", stages);
            }
            case "info" -> {
                reply.put("ok", true);
                reply.put("fake", driver.status().fake());
                reply.put("liveAllocations", LiveAllocations.total());
                reply.put("gpus", GpuInventory.scan(driver).gpus().stream().map(GpuDevice::uuid).toList());
            }
            default -> throw new IllegalArgumentException("unknown op '" + op + "'");
        }
        return reply;
    }

    private StageResult releaseExport() {
        if (exported == null) {
            return null;
        }
        StageResult r = engine.run(exported, List.of(new ReleaseStage())).getFirst();
        exported = null;
        return r;
    }

    private static Long seed(JsonNode r, String field) {
        JsonNode v = r.get(field);
        return v == null || v.isNull() ? null : v.asLong();
    }
}
