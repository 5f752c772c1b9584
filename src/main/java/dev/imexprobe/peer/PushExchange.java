package dev.imexprobe.peer;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.peer.Prober.Peer;
import dev.imexprobe.peer.Prober.Request;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.Verdict;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.Expected;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.TransferStage;

import java.util.List;

/** Push: this agent exports, the target imports (POST /v1/imports), and this agent checks its write-back. */
final class PushExchange extends Exchange {

    private final ExportRegistry registry;
    /**
     * From the importer's answer arriving to the check and release handed to the driver pool (reading, parsing and
     * stitching the answer), the last few pushes, by size: when the worker woken at the answer should be ready.
     * Woken at the answer's expected time instead, it missed the ±100 µs spin window as often as not: the importer's
     * time varies more than that (the hand-off took 0.04 ms on the H200 where the others take 0.01).
     */
    private final Expected checks = new Expected();

    PushExchange(LocalAgent self, ExportRegistry registry, PeerClient client) {
        super(self, client);
        this.registry = registry;
    }

    @Override
    PairResult run(Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs, Request request,
                   Confirmation confirmation) {
        long start = System.nanoTime();
        Debug debug = new Debug(request.debug());
        long size = sizeFor(request, mine.index());
        long seed = Seeds.next();
        Long writebackSeed = request.writeback() ? Seeds.next() : null;
        StageStitch stitch = new StageStitch();
        ExportRegistry.Created created = registry.create(mine.index(), size, seed);
        stitch.addAll(created.stages());
        if (debug.on()) {
            debug.say("exported " + size + " bytes on local GPU " + mine.index() + ": " + (created.ok() ? "ok" : "failed"));
        }
        if (created.refused() != null) {
            return notProbed(Direction.PUSH, self.node(), mine, peer.node(), theirs, created.stages(), created.refused(),
                    start);
        }
        if (!created.ok()) {
            stitch.gap("not run: the export failed");
            return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, null, null, start, debug);
        }
        String id = created.export().id();
        FabricHandle handle = created.export().session().fabricHandle();
        ImportRequest body = new ImportRequest(handle.base64(), "FABRIC", size, theirs.uuid(), seed, writebackSeed,
                self.node(), mine.uuid());
        long[] answered = {0};
        Runnable answering = () -> { // the check and release follow the answer: a worker awake for them
            answered[0] = System.nanoTime();
            registry.expectWork(Math.max(0, checks.estimate(size)));
        };
        PeerCall<ImportReply> reply = ScopedValue.where(PeerHttp.ANSWERING, answering)
                .call(() -> PeerAnswers.checked(client.postImport(peer.target(), body), PeerAnswers::importerProblem));
        if (debug.on()) {
            debug.say("POST /v1/imports on " + peer.target() + ": " + describe(reply));
        }
        confirmation.check(reply.ok(), reply.ok() && peer.node().equals(reply.value().node()));
        Finding transferFinding = null;
        if (!reply.ok()) {
            stitch.add(PeerAnswers.transferFailure(reply));
            transferFinding = PeerAnswers.peerFinding(peer.target(), reply);
            stitch.gap("not run: the handle did not reach the importer");
            stitch.add(registry.release(id));
            return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, null, transferFinding, start,
                    debug);
        }
        List<StageResult> remote = reply.value().stages();
        if (reply.value().verdict() == Verdict.NOT_PROBED) {
            registry.release(id); // the importer takes no context on that GPU: nothing was tried there
            return notProbed(Direction.PUSH, self.node(), mine, peer.node(), theirs, remote, reply.value().finding(),
                    start);
        }
        stitch.add(TransferStage.of(StageStatus.OK, Math.max(0, reply.nanos() - nanos(remote)),
                "handle sent to " + peer.node() + " (" + reply.httpStatus() + ")"));
        // Only the importer's own stages count from its answer; create, export and transfer are ours.
        stitch.addAllExcept(remote, Stage.CREATE, Stage.EXPORT, Stage.TRANSFER, Stage.WRITEBACK, Stage.RELEASE);
        StageResult remoteWrite = find(remote, Stage.WRITEBACK);
        // The check of the write-back and our release in one hop onto the driver pool.
        if (answered[0] != 0) {
            checks.record(size, System.nanoTime() - answered[0]);
        }
        List<StageResult> ours = registry.checkAndRelease(id, remoteWrite != null && remoteWrite.ok() ? writebackSeed : null);
        StageResult check = ours != null && ours.size() == 2 ? ours.getFirst() : null;
        StageResult release = ours == null ? null : ours.getLast();
        stitch.add(StageStitch.mergeWriteback(remoteWrite, check));
        stitch.add(StageStitch.mergeRelease(find(remote, Stage.RELEASE), release));
        // The importer knows whether it sees our GPU; its finding's evidence says so.
        return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch,
                ProbeDiagnosis.exporterGpuSeen(reply.value().finding()), null, start, debug);
    }
}
