package dev.imexprobe.ladder;

import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.ladder.LadderWorker.WorkerFailure;
import dev.imexprobe.ladder.WorkerReply.ListenReply;
import dev.imexprobe.ladder.WorkerReply.StageReply;
import dev.imexprobe.ladder.WorkerReply.StagesReply;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.TransferStage;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * One export → import between two worker processes, as one probe's stage list: a FABRIC handle travels through the
 * ladder (64 bytes of text), a POSIX_FD descriptor over a Unix socket the importer listens on. The exporter checks
 * the importer's write-back and releases; both sides' stages are merged as the agent's probe merges them.
 */
final class WorkerExchange {

    private final LadderWorker exporter;
    private final LadderWorker importer;
    private final Supplier<Duration> timeout;

    /** @param timeout how long the next answer may take (the ladder's budget shrinks as it climbs) */
    WorkerExchange(LadderWorker exporter, LadderWorker importer, Supplier<Duration> timeout) {
        this.exporter = exporter;
        this.importer = importer;
        this.timeout = timeout;
    }

    List<StageResult> fabric(int exporterGpu, int importerGpu, long size) throws WorkerFailure {
        long seed = Seeds.next();
        long writeback = Seeds.next();
        StageStitch st = new StageStitch();
        StagesReply ex = exporter.request(new WorkerRequest.Export(exporterGpu, size, seed, HandleType.FABRIC),
                timeout.get());
        st.addAll(stagesOf(ex, exporter, "export"));
        if (!ex.ok()) {
            return st.list("not run: the export failed");
        }
        st.add(TransferStage.of(StageStatus.OK, 0, "the 64-byte handle went to the importer process through the "
                + "ladder"));
        StagesReply im = importer.request(new WorkerRequest.Import(ex.handle(), size, importerGpu, seed, writeback),
                timeout.get());
        finish(st, stagesOf(im, importer, "import"), writeback);
        return st.list("not run: " + firstFailureLabel(st) + " failed");
    }

    List<StageResult> posixFd(int exporterGpu, int importerGpu, long size, Path socketPath) throws WorkerFailure {
        long seed = Seeds.next();
        long writeback = Seeds.next();
        StageStitch st = new StageStitch();
        String socket = socketPath.toString();
        ListenReply listen = importer.request(new WorkerRequest.Listen(socket), timeout.get());
        if (!listen.ok()) {
            st.add(TransferStage.of(StageStatus.FAILED, 0, "the importer could not listen on " + socket
                    + ": errno " + listen.errno()));
            return st.list("not run: no Unix socket for the descriptor");
        }
        StagesReply ex = exporter.request(new WorkerRequest.Export(exporterGpu, size, seed, HandleType.POSIX_FD),
                timeout.get());
        st.addAll(stagesOf(ex, exporter, "export"));
        if (!ex.ok()) {
            return st.list("not run: the export failed");
        }
        StageReply sent = exporter.request(new WorkerRequest.SendFd(socket), timeout.get());
        st.add(sent.stage());
        if (!sent.ok()) {
            st.add(release());
            return st.list("not run: the descriptor did not reach the importer");
        }
        StagesReply im = importer.request(new WorkerRequest.ImportFd(size, importerGpu, seed, writeback),
                timeout.get());
        if (im.stages() == null) {
            st.add(TransferStage.of(StageStatus.FAILED, 0, "the importer received no descriptor: "
                    + (im.error() != null ? im.error() : "no reason given")));
            st.add(release());
            return st.list("not run: the descriptor did not reach the importer");
        }
        finish(st, im.stages(), writeback);
        return st.list("not run: " + firstFailureLabel(st) + " failed");
    }

    /** The importer's stages, then the exporter's check of the write-back and its release, merged. */
    private void finish(StageStitch st, List<StageResult> imported, long writeback) throws WorkerFailure {
        StageResult write = null;
        StageResult importerRelease = null;
        for (StageResult r : imported) {
            if (r.name() == Stage.WRITEBACK) {
                write = r;
            } else if (r.name() == Stage.RELEASE) {
                importerRelease = r;
            } else {
                st.add(r);
            }
        }
        StageResult check = null;
        if (write != null && write.ok()) {
            check = exporter.request(new WorkerRequest.Verify(writeback), timeout.get()).stage();
        }
        st.add(StageStitch.mergeWriteback(write, check));
        st.add(StageStitch.mergeRelease(importerRelease, release()));
    }

    private StageResult release() throws WorkerFailure {
        return exporter.request(new WorkerRequest.Release(), timeout.get()).stage();
    }

    /** A reply's stages; a reply without them is the worker refusing the request. */
    static List<StageResult> stagesOf(StagesReply reply, LadderWorker worker, String op) throws WorkerFailure {
        if (reply.stages() == null) {
            throw new WorkerFailure("the " + worker.name() + " worker refused '" + op + "': "
                    + (reply.error() != null ? reply.error() : "no stages in its answer"));
        }
        return reply.stages();
    }

    private static String firstFailureLabel(StageStitch st) {
        StageResult f = StageEngine.firstFailure(st.list("-"));
        return f == null ? "an earlier stage" : f.name().label();
    }
}
