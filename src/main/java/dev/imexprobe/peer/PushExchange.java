package dev.imexprobe.peer;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.finding.Blame;
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
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.TransferStage;

import java.util.List;

/** Push: this agent exports, the target imports (POST /v1/imports), and this agent checks its write-back. */
final class PushExchange extends Exchange {

    private final ExportRegistry registry;
    /**
     * From the import request begun to its answer's first byte, the last few pushes, by size: a driver worker is
     * woken to spin around then, so that the check and release started at that byte cost no wake-up (0.03–0.04
     * ms on the H200, 0.07–0.1 ms on a small VM).
     */
    private final Expected answers = new Expected();

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
                    Blame.SOURCE, start);
        }
        if (!created.ok()) {
            stitch.gap("not run: the export failed");
            return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, null, null, start, debug);
        }
        String id = created.export().id();
        FabricHandle handle = created.export().session().fabricHandle();
        ImportRequest body = new ImportRequest(handle.base64(), "FABRIC", size, theirs.uuid(), seed, writebackSeed,
                self.node(), mine.uuid());
        // The importer's answer begins once it is done with the memory (its head is sent before its release):
        // the write-back check and our release start then, on the driver pool, while the answer is read.
        StageEngine.Pending[] ours = {null};
        long began = System.nanoTime();
        long due = answers.estimate(size);
        if (due >= 0) {
            registry.expectWork(due);
        }
        Runnable answering = () -> {
            if (ours[0] == null) {
                answers.record(size, System.nanoTime() - began);
                ours[0] = registry.startCheckAndRelease(id, writebackSeed);
            }
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
            stitch.add(released(ours[0], id));
            return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch, null, transferFinding, start,
                    debug);
        }
        List<StageResult> remote = reply.value().stages();
        if (reply.value().verdict() == Verdict.NOT_PROBED) {
            released(ours[0], id); // the importer takes no context on that GPU: nothing was tried there
            return notProbed(Direction.PUSH, self.node(), mine, peer.node(), theirs, remote, reply.value().finding(),
                    Blame.TARGET, start);
        }
        stitch.add(TransferStage.of(StageStatus.OK, Math.max(0, reply.nanos() - nanos(remote)),
                "handle sent to " + peer.node() + " (" + reply.httpStatus() + ")"));
        // Only the importer's own stages count from its answer; create, export and transfer are ours.
        stitch.addAllExcept(remote, Stage.CREATE, Stage.EXPORT, Stage.TRANSFER, Stage.WRITEBACK, Stage.RELEASE);
        StageResult remoteWrite = find(remote, Stage.WRITEBACK);
        boolean written = remoteWrite != null && remoteWrite.ok();
        // The check of the write-back and our release, one list on the driver pool: started when the answer began,
        // else now. A check the importer's answer gives no ground for (it wrote nothing) is not reported.
        List<StageResult> checked = ours[0] != null ? ours[0].await()
                : registry.checkAndRelease(id, written ? writebackSeed : null);
        StageResult check = written && checked != null && checked.size() == 2 ? checked.getFirst() : null;
        StageResult release = checked == null ? null : checked.getLast();
        stitch.add(StageStitch.mergeWriteback(remoteWrite, check));
        stitch.add(StageStitch.mergeRelease(find(remote, Stage.RELEASE), release));
        // The importer knows whether it sees our GPU; its finding's evidence says so.
        return finish(Direction.PUSH, self.node(), mine, peer.node(), theirs, stitch,
                ProbeDiagnosis.exporterGpuSeen(reply.value().finding()), null, start, debug);
    }

    /** Our release's result: of the list started at the answer, else of a release now. */
    private StageResult released(StageEngine.Pending started, String id) {
        if (started == null) {
            return registry.release(id);
        }
        List<StageResult> r = started.await();
        return r == null || r.isEmpty() ? null : r.getLast();
    }
}
