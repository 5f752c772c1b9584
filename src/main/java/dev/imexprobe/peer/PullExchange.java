package dev.imexprobe.peer;

import dev.imexprobe.api.ExportReply;
import dev.imexprobe.api.ExportRequest;
import dev.imexprobe.api.StageReply;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.peer.Prober.Peer;
import dev.imexprobe.peer.Prober.Request;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.LocalAgent;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDeadline;
import dev.imexprobe.probe.Seeds;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.TransferStage;
import dev.imexprobe.probe.Verdict;

import java.util.List;
import java.util.Map;

/** Pull: the target exports (POST /v1/exports), this agent imports, and the target checks the write-back. */
final class PullExchange extends Exchange {

    /** Releases asked of exporters after a probe's answer, at most this many at once (each ends by the peer timeout). */
    private static final int RELEASES_AFTER_THE_ANSWER_MAX = 64;
    private static final java.util.concurrent.Semaphore RELEASES_AFTER_THE_ANSWER =
            new java.util.concurrent.Semaphore(RELEASES_AFTER_THE_ANSWER_MAX);

    private final Importer importer;

    PullExchange(LocalAgent self, Importer importer, PeerClient client) {
        super(self, client);
        this.importer = importer;
    }

    @Override
    PairResult run(Peer peer, GpuSelector.Gpu mine, GpuSelector.Gpu theirs, Request request,
                   Confirmation confirmation) {
        long start = System.nanoTime();
        Finding refused = importer.refusal(mine.index());
        if (refused != null) {
            // this agent takes no context on its GPU: asking the peer to export would make memory for nothing, and
            // an import that runs no stage must not read as a pass
            return notProbed(Direction.PULL, peer.node(), theirs, self.node(), mine, List.of(), refused, Blame.TARGET,
                    start);
        }
        Debug debug = new Debug(request.debug());
        long size = sizeFor(request, mine.index());
        long seed = Seeds.next();
        Long writebackSeed = request.writeback() ? Seeds.next() : null;
        StageStitch stitch = new StageStitch();
        ExportRequest body = new ExportRequest(theirs.uuid(), size, "FABRIC", seed);
        PeerCall<ExportReply> reply = PeerAnswers.checked(client.postExport(peer.target(), body),
                PeerAnswers::exporterProblem);
        if (debug.on()) {
            debug.say("POST /v1/exports on " + peer.target() + ": " + describe(reply));
        }
        boolean named = reply.ok() && reply.value().exporter() != null;
        confirmation.check(named, named && peer.node().equals(reply.value().exporter().node()));
        if (!reply.ok()) {
            stitch.add(PeerAnswers.transferFailure(reply));
            stitch.gap("not run: the exporter could not be asked");
            return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch, sees(theirs.uuid()),
                    pulled(PeerAnswers.peerFinding(peer.target(), reply)), start, debug);
        }
        ExportReply export = reply.value();
        if (export.verdict() == Verdict.NOT_PROBED && StageEngine.firstFailure(export.stages()) == null) {
            // a GPU that takes no context refused before any stage ran; a full GPU's failed create (also not
            // probed) goes on below, to be diagnosed here where both nodes are known
            return notProbed(Direction.PULL, peer.node(), theirs, self.node(), mine, export.stages(), export.finding(),
                    Blame.SOURCE, start);
        }
        stitch.addAllExcept(export.stages(), Stage.TRANSFER, Stage.IMPORT, Stage.RESERVE, Stage.MAP, Stage.ACCESS,
                Stage.VERIFY, Stage.WRITEBACK, Stage.RELEASE);
        if (export.verdict() != Verdict.PASS || export.handle() == null) {
            stitch.gap("not run: the exporter failed");
            stitch.add(find(export.stages(), Stage.RELEASE));
            return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch, sees(theirs.uuid()), null,
                    start, debug);
        }
        FabricHandle handle;
        try {
            handle = FabricHandle.fromBase64(export.handle());
        } catch (IllegalArgumentException e) {
            stitch.add(TransferStage.of(StageStatus.FAILED, reply.nanos(), "the exporter sent an unusable handle: "
                    + e.getMessage()));
            stitch.gap("not run: no usable handle");
            stitch.add(remoteRelease(peer, export.id()));
            return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch, sees(theirs.uuid()),
                    pulled(FindingCode.PEER_ERROR.finding(Map.of("peer", peer.target(), "stage",
                            Stage.TRANSFER.label(), "detail", "the exporter sent an unusable handle: "
                                    + e.getMessage()))), start, debug);
        }
        stitch.add(TransferStage.of(StageStatus.OK, Math.max(0, reply.nanos() - nanos(export.stages())),
                "handle received from " + peer.node() + " (" + reply.httpStatus() + ")"));
        List<StageResult> local = importer.importFabric(handle, size, mine.index(), seed, writebackSeed);
        stitch.addAllExcept(local, Stage.WRITEBACK, Stage.RELEASE);
        StageResult write = find(local, Stage.WRITEBACK);
        StageResult check = null;
        Finding unasked = null;
        if (write != null && write.ok()) {
            PeerCall<StageReply> v = client.verifyExport(peer.target(), export.id(), writebackSeed);
            if (debug.on()) {
                debug.say("POST /v1/exports/" + export.id() + "/verify: " + describe(v));
            }
            if (v.ok() && v.value().stage() != null) {
                check = v.value().stage();
            } else {
                // No answer, a timeout, a refusal (an export past its TTL): the exporter's side or the network, never
                // this importer's driver (as a write-back stage without a CUresult would be named)
                check = new StageResult(Stage.WRITEBACK, v.kind() == PeerCall.Kind.TIMEOUT ? StageStatus.TIMEOUT
                        : StageStatus.FAILED, null, null, v.nanos() / 1e9,
                        "the exporter could not be asked to check the write-back: "
                                + (v.ok() ? "the peer's answer has no stages" : v.detail()));
                unasked = pulled(PeerAnswers.peerFinding(peer.target(), v, Stage.WRITEBACK));
            }
        }
        stitch.add(StageStitch.mergeWriteback(write, check));
        stitch.add(StageStitch.mergeRelease(find(local, Stage.RELEASE), remoteRelease(peer, export.id())));
        return finish(Direction.PULL, peer.node(), theirs, self.node(), mine, stitch, sees(theirs.uuid()), unasked,
                start, debug);
    }

    /**
     * A finding about the call to the peer, as a pull reports it. The catalogue blames the peer as the target (push:
     * the peer imports) and this agent's own missing token as the source; in a pull the peer is the exporter and this
     * agent the importer, so the sides swap.
     */
    private static Finding pulled(Finding aboutThePeerCall) {
        return aboutThePeerCall.withBlame(aboutThePeerCall.blame() == Blame.SOURCE ? Blame.TARGET : Blame.SOURCE, null);
    }

    private StageResult remoteRelease(Peer peer, String id) {
        if (!ProbeDeadline.past()) {
            PeerCall<StageReply> d = client.deleteExport(peer.target(), id);
            if (d.ok() && d.value().stage() != null) {
                return d.value().stage();
            }
            if (!ProbeDeadline.past()) {
                // Not fatal: the exporter releases it when its TTL runs out.
                return new StageResult(Stage.RELEASE, StageStatus.FAILED, null, null, d.nanos() / 1e9,
                        "could not ask the exporter to release (" + d.detail() + "); it expires by its TTL");
            }
        }
        // The probe's deadline left no time to ask (an exporter slow to check the write-back used it up): asked once
        // more after the answer, under the peer timeout alone, so the exporter's GPU memory goes back now and not
        // at its TTL (60 s). A thread of its own does not inherit the probe's deadline.
        if (!RELEASES_AFTER_THE_ANSWER.tryAcquire()) {
            return StageResult.skipped(Stage.RELEASE, "not asked: " + ProbeDeadline.PASSED + " and "
                    + RELEASES_AFTER_THE_ANSWER_MAX + " releases already wait for their exporters; it expires by its TTL");
        }
        Thread.ofVirtual().name("release-after-answer").start(() -> {
            try {
                client.deleteExport(peer.target(), id);
            } finally {
                RELEASES_AFTER_THE_ANSWER.release();
            }
        });
        return StageResult.skipped(Stage.RELEASE, "deferred: " + ProbeDeadline.PASSED + "; the exporter is asked "
                + "to release after the answer (else it expires by its TTL)");
    }

}
