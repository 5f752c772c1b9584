package dev.imexprobe.probe;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.FabricHandle;

import java.util.List;

/**
 * The importer's half of an exchange: import, reserve, map, access, verify, write the write-back pattern,
 * release. Everything imported is released on every path (the release stage always runs; a stage stuck in
 * the driver releases on return).
 */
public final class Importer {

    static final List<ProbeStage> STAGES = List.of(new ImportStage(), new ReserveStage(), new MapStage(),
            new AccessStage(), new VerifyStage(), new WritebackStage(WritebackStage.Side.WRITE), new ReleaseStage());

    /** The stages an importer reports, all of them on every path (skipped ones say why). */
    public static final List<Stage> REPORTED = STAGES.stream().map(ProbeStage::stage).toList();

    private final CudaDriver driver;
    private final StageEngine engine;
    private final ContextGuard guard;

    public Importer(CudaDriver driver, StageEngine engine) {
        this(driver, engine, ContextGuard.NONE);
    }

    public Importer(CudaDriver driver, StageEngine engine, ContextGuard guard) {
        this.driver = driver;
        this.engine = engine;
        this.guard = guard;
    }

    /** Why no context may be created on {@code gpu} (then an import runs no stage), or null. */
    public dev.imexprobe.finding.Finding refusal(int gpu) {
        return guard.refusal(gpu);
    }

    public List<StageResult> importFabric(FabricHandle handle, long sizeBytes, int gpu, Long seed, Long writebackSeed) {
        return importFabric(handle, sizeBytes, gpu, seed, writebackSeed, null);
    }

    /**
     * As above; {@code contentsDone}, when not null, runs once this importer is done with the memory's contents
     * (its write-back written, or skipped) and before it releases: from then on the exporter may check and
     * release its side while this one releases and answers. On the driver thread, with the caller waiting.
     */
    public List<StageResult> importFabric(FabricHandle handle, long sizeBytes, int gpu, Long seed, Long writebackSeed,
                                          Runnable contentsDone) {
        dev.imexprobe.finding.Finding refused = guard.refusal(gpu);
        if (refused != null) {
            return ContextGuard.skipped(REPORTED, refused);
        }
        return engine.run(ProbeSession.forImport(driver, handle, sizeBytes, gpu, seed, writebackSeed), STAGES,
                Stage.WRITEBACK, contentsDone);
    }

    /** A descriptor received from a process on this host; the session closes it. */
    public List<StageResult> importPosixFd(int fd, long sizeBytes, int gpu, Long seed, Long writebackSeed) {
        if (guard.refusal(gpu) != null) {
            driver.closeFd(fd); // the session would have closed it
            return ContextGuard.skipped(REPORTED, guard.refusal(gpu));
        }
        return engine.run(ProbeSession.forFdImport(driver, fd, sizeBytes, gpu, seed, writebackSeed), STAGES);
    }
}
