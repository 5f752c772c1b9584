package dev.imexprobe.ladder;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.FdPassing;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.GpuInventory;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.LiveAllocations;
import dev.imexprobe.json.Json;
import dev.imexprobe.ladder.WorkerReply.DoneReply;
import dev.imexprobe.ladder.WorkerReply.InfoReply;
import dev.imexprobe.ladder.WorkerReply.ListenReply;
import dev.imexprobe.ladder.WorkerReply.NodeReply;
import dev.imexprobe.ladder.WorkerReply.StageReply;
import dev.imexprobe.ladder.WorkerReply.StagesReply;
import dev.imexprobe.ladder.WorkerReply.ViewReply;
import dev.imexprobe.ladder.WorkerRequest.Exit;
import dev.imexprobe.ladder.WorkerRequest.Export;
import dev.imexprobe.ladder.WorkerRequest.Import;
import dev.imexprobe.ladder.WorkerRequest.ImportFd;
import dev.imexprobe.ladder.WorkerRequest.Info;
import dev.imexprobe.ladder.WorkerRequest.Listen;
import dev.imexprobe.ladder.WorkerRequest.Node;
import dev.imexprobe.ladder.WorkerRequest.Release;
import dev.imexprobe.ladder.WorkerRequest.SelfProbe;
import dev.imexprobe.ladder.WorkerRequest.SendFd;
import dev.imexprobe.ladder.WorkerRequest.Verify;
import dev.imexprobe.ladder.WorkerRequest.View;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.ProbeSession;
import dev.imexprobe.probe.ReleaseStage;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.TransferStage;
import dev.imexprobe.probe.WritebackStage;

import tools.jackson.databind.exc.InvalidTypeIdException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * One side of an exchange in its own process, driven over stdin/stdout with one JSON object per line: a
 * {@link WorkerRequest} in, its {@link WorkerReply} out. The ladder starts an exporter and an importer worker under
 * growing isolation (CUDA_VISIBLE_DEVICES, mount namespaces, channel views) and asks each for its half; tests and
 * the bench drive the same records. No Spring, fast start.
 */
public final class Worker {

    private static final int FD_TIMEOUT_MILLIS = 10_000;

    private final CudaDriver driver;
    private final StageEngine engine;
    private ProbeSession exported;
    private int listeningSocket = -1;

    public Worker(CudaDriver driver, StageEngine engine) {
        this.driver = driver;
        this.engine = engine;
    }

    /** Serves requests until {@code exit} or end of input; releases whatever it still holds. */
    public void serve(BufferedReader in, PrintStream out) throws IOException {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                WorkerReply reply;
                boolean exit = false;
                try {
                    WorkerRequest<?> request = Json.MAPPER.readValue(line, WorkerRequest.class);
                    exit = request instanceof Exit;
                    reply = exit ? new DoneReply(true, null) : handle(request);
                } catch (InvalidTypeIdException e) {
                    reply = new DoneReply(false, e.getTypeId() == null ? "the request names no op"
                            : "unknown op '" + e.getTypeId() + "'");
                } catch (RuntimeException e) {
                    reply = new DoneReply(false, e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                out.println(Json.MAPPER.writeValueAsString(reply));
                out.flush();
                if (exit) {
                    return;
                }
            }
        } finally {
            releaseExport();
            if (listeningSocket >= 0) {
                FdPassing.close(listeningSocket);
            }
        }
    }

    WorkerReply handle(WorkerRequest<?> request) {
        return switch (request) {
            case Node n -> node();
            case Export e -> export(e);
            case SendFd s -> sendFd(s);
            case Listen l -> listen(l);
            case ImportFd i -> importFd(i);
            case Import i -> StagesReply.of(new Importer(driver, engine).importFabric(
                    FabricHandle.fromBase64(i.handle()), i.sizeBytes(), i.gpu(), i.seed(), i.writebackSeed()));
            case Verify v -> verify(v);
            case Release r -> {
                StageResult stage = releaseExport();
                yield new StageReply(stage == null || stage.ok(), stage, null);
            }
            case View v -> new ViewReply(true, ProcessView.inspect(driver), null);
            case SelfProbe p -> selfProbe(p);
            case Info i -> new InfoReply(true, driver.status().fake(), LiveAllocations.total(),
                    GpuInventory.scan(driver).gpus().stream().map(GpuDevice::uuid).toList(), null);
            case Exit x -> new DoneReply(true, null);
        };
    }

    private NodeReply node() {
        GpuInventory inv = GpuInventory.scan(driver);
        // Why nothing loaded, in the driver status's words (the ladder reports it as NO_DRIVER).
        return new NodeReply(inv.init().ok(), inv.init().name(), inv.gpus(), driver.status().fake(),
                driver.status().unavailableReason(), driver.status().cudaLibrary(), null);
    }

    private StagesReply export(Export r) {
        releaseExport();
        exported = new ProbeSession(driver, r.handleType(), r.sizeBytes(), r.seed(), null, r.gpu(), -1);
        List<StageResult> stages = new ArrayList<>(engine.run(exported, ExportRegistry.EXPORT_STAGES));
        boolean ok = StageEngine.passed(stages);
        String handle = ok && r.handleType() == HandleType.FABRIC ? exported.fabricHandle().base64() : null;
        if (!ok) {
            stages.addAll(engine.run(exported, List.of(new ReleaseStage())));
            exported = null;
        }
        return new StagesReply(ok, handle, stages, null);
    }

    private StageReply sendFd(SendFd r) {
        long start = System.nanoTime();
        int rc = exported == null || exported.exportedFd() < 0 ? -1
                : FdPassing.sendFd(r.socket(), exported.exportedFd(), FD_TIMEOUT_MILLIS);
        return new StageReply(rc == 0, TransferStage.of(rc == 0 ? StageStatus.OK : StageStatus.FAILED,
                System.nanoTime() - start, rc == 0 ? "descriptor sent over a Unix socket (SCM_RIGHTS)"
                        : rc < 0 ? "nothing exported as POSIX_FD" : "sendmsg failed: errno " + rc), null);
    }

    private ListenReply listen(Listen r) {
        int[] fd = new int[1];
        int rc = FdPassing.listen(r.socket(), fd);
        listeningSocket = rc == 0 ? fd[0] : -1;
        return new ListenReply(rc == 0, rc, null);
    }

    private StagesReply importFd(ImportFd r) {
        int[] fd = new int[1];
        int rc = listeningSocket < 0 ? -1 : FdPassing.acceptFd(listeningSocket, FD_TIMEOUT_MILLIS, fd);
        if (listeningSocket >= 0) {
            FdPassing.close(listeningSocket);
            listeningSocket = -1;
        }
        if (rc != 0) {
            return new StagesReply(false, null, null, rc < 0 ? "not listening" : "no descriptor arrived: errno " + rc);
        }
        return StagesReply.of(new Importer(driver, engine).importPosixFd(fd[0], r.sizeBytes(), r.gpu(), r.seed(),
                r.writebackSeed()));
    }

    private StageReply verify(Verify r) {
        if (exported == null) {
            throw new IllegalStateException("nothing exported");
        }
        ProbeSession check = exported.withWritebackSeed(r.seed());
        StageResult stage = engine.run(check, List.of(new WritebackStage(WritebackStage.Side.CHECK))).getFirst();
        return new StageReply(stage.ok(), stage, null);
    }

    private StagesReply selfProbe(SelfProbe r) {
        long seed = r.seed() != null ? r.seed() : Seeds.next();
        long writeback = r.writebackSeed() != null ? r.writebackSeed() : Seeds.next();
        ProbeSession session = new ProbeSession(driver, r.handleType(), r.sizeBytes(), seed, writeback, r.gpu(), r.gpu());
        return StagesReply.of(engine.run(session, dev.imexprobe.probe.SelfProbe.STAGES));
    }

    private StageResult releaseExport() {
        if (exported == null) {
            return null;
        }
        StageResult r = engine.run(exported, List.of(new ReleaseStage())).getFirst();
        exported = null;
        return r;
    }
}
