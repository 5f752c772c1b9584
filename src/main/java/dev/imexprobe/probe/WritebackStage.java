package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;

/**
 * The importer writes a second pattern through its mapping and the exporter checks it in its own: proof of
 * write access across the fabric, not just read. Between agents the two halves run on different hosts
 * ({@link Side#WRITE} on the importer, {@link Side#CHECK} on the exporter); in one process, {@link Side#BOTH}.
 */
public final class WritebackStage implements ProbeStage {

    public enum Side { WRITE, CHECK, BOTH }

    private final Side side;

    public WritebackStage(Side side) {
        this.side = side;
    }

    @Override
    public Stage stage() {
        return Stage.WRITEBACK;
    }

    @Override
    public StageOutcome run(ProbeSession s) {
        if (s.writebackSeed == null) {
            return StageOutcome.skipped("write-back not requested");
        }
        if (side != Side.CHECK) {
            CuResult w = s.importerMapping.fill(s.writebackSeed);
            if (!w.ok()) {
                return StageOutcome.failed(w, "the importer's write" + s.importerMapping.fillWay() + " returned " + w.name());
            }
            if (side == Side.WRITE) {
                return StageOutcome.ok(w, "importer wrote the write-back pattern" + s.importerMapping.fillWay()
                        + "; the exporter checks it");
            }
        }
        return check(s);
    }

    /** The exporter's half: does its own mapping now hold the importer's pattern? */
    static StageOutcome check(ProbeSession s) {
        CuCall<Long> v = s.exporterMapping.verify(s.writebackSeed);
        if (!v.ok()) {
            return StageOutcome.failed(v.result(), "the exporter's read-back" + s.exporterMapping.checkWay() + " returned "
                    + v.result().name());
        }
        if (v.value() >= 0) {
            return StageOutcome.failed(v.result(), "write-back mismatch at byte " + v.value()
                    + ": the importer's writes did not reach the exporter's memory");
        }
        return StageOutcome.ok(v.result(), "the exporter sees the importer's write-back pattern");
    }
}
