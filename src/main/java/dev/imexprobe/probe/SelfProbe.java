package dev.imexprobe.probe;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.finding.Finding;

import java.util.List;

/**
 * The whole exchange inside one process on one GPU: create, export, import of its own handle, map, access,
 * read back, write back, release. It proves the local driver, channel and GPU can do fabric memory; only a
 * probe between agents proves two GPUs share an IMEX domain.
 */
public final class SelfProbe {

    /** Every stage in this one process, for either handle type (the ladder's rung 0 runs them too). */
    public static final List<ProbeStage> STAGES = List.of(new CreateStage(), new ExportStage(),
            TransferStage.inProcess(), new ImportStage(), new ReserveStage(), new MapStage(), new AccessStage(),
            new VerifyStage(), new WritebackStage(WritebackStage.Side.BOTH), new ReleaseStage());

    private final CudaDriver driver;
    private final StageEngine engine;

    public SelfProbe(CudaDriver driver, StageEngine engine) {
        this.driver = driver;
        this.engine = engine;
    }

    public SelfProbeResult run(int ordinal, long sizeBytes, String node) {
        long start = System.nanoTime();
        ProbeSession session = new ProbeSession(driver, HandleType.FABRIC, sizeBytes, Seeds.next(), Seeds.next(),
                ordinal, ordinal);
        List<StageResult> stages = engine.run(session, STAGES);
        boolean pass = StageEngine.passed(stages);
        Finding finding = ProbeDiagnosis.diagnose(stages, true, null, true, node, node);
        return new SelfProbeResult(ordinal, sizeBytes, ProbeDiagnosis.verdict(pass, finding),
                (System.nanoTime() - start) / 1e9, stages, finding);
    }

    public record SelfProbeResult(int gpu, long sizeBytes, Verdict verdict, double durationSeconds,
                                  List<StageResult> stages, Finding finding) {
    }
}
