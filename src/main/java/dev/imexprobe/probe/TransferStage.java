package dev.imexprobe.probe;

/**
 * The handle's trip from exporter to importer. Within one process there is nothing to send; between agents
 * the HTTP exchange is timed by the prober and reported through {@link #of}; on one host a descriptor
 * crosses a Unix socket (the ladder). No driver call, so never a CUresult.
 */
public final class TransferStage implements ProbeStage {

    private final String inProcessDetail;

    private TransferStage(String inProcessDetail) {
        this.inProcessDetail = inProcessDetail;
    }

    /** The self-probe's transfer: the handle stays in this process. */
    public static TransferStage inProcess() {
        return new TransferStage("self-probe: the handle does not leave this process");
    }

    @Override
    public Stage stage() {
        return Stage.TRANSFER;
    }

    @Override
    public boolean callsDriver() {
        return false;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        return StageOutcome.skipped(inProcessDetail);
    }

    /** A transfer that happened elsewhere (HTTP, a socket), measured by whoever did it. */
    public static StageResult of(StageStatus status, long nanos, String detail) {
        return new StageResult(Stage.TRANSFER, status, null, null, nanos / 1e9, detail);
    }
}
