package dev.imexprobe.probe;

import dev.imexprobe.cuda.Allocation;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.Mapping;

/**
 * The state one exchange carries from stage to stage: what each side holds and the seeds both compute.
 * A side that is remote simply leaves its fields empty. Stages run one at a time; a stage that outlived its
 * deadline may still write here, which is why the fields are volatile and release is idempotent.
 */
public final class ProbeSession {

    final CudaDriver driver;
    final HandleType handleType;
    final long sizeBytes;
    /** The pattern the exporter writes and the importer checks; null = verify is skipped (foreign handle). */
    final Long seed;
    /** The pattern the importer writes back and the exporter checks; null = no write-back. */
    final Long writebackSeed;
    final int exporterOrdinal;
    final int importerOrdinal;

    volatile Allocation created;
    volatile Mapping exporterMapping;
    volatile FabricHandle fabricHandle;
    /** POSIX_FD: the exporter's descriptor, and the importer's copy once it has travelled. */
    volatile int exportedFd = -1;
    volatile int importedFd = -1;
    volatile Allocation imported;
    volatile Mapping importerMapping;
    /**
     * Set while a stage of this session is still inside the driver after its deadline: nothing else may touch
     * the session's resources until that call returns (its thread then releases them and clears this).
     */
    volatile Stage stuck;

    public ProbeSession(CudaDriver driver, HandleType handleType, long sizeBytes, Long seed, Long writebackSeed,
                        int exporterOrdinal, int importerOrdinal) {
        this.driver = driver;
        this.handleType = handleType;
        this.sizeBytes = sizeBytes;
        this.seed = seed;
        this.writebackSeed = writebackSeed;
        this.exporterOrdinal = exporterOrdinal;
        this.importerOrdinal = importerOrdinal;
    }

    /** An importer's session for a handle that arrived from elsewhere. */
    public static ProbeSession forImport(CudaDriver driver, FabricHandle handle, long sizeBytes, int importerOrdinal,
                                         Long seed, Long writebackSeed) {
        ProbeSession s = new ProbeSession(driver, HandleType.FABRIC, sizeBytes, seed, writebackSeed, -1,
                importerOrdinal);
        s.fabricHandle = handle;
        return s;
    }

    /** An importer's session for a descriptor received over a Unix socket (same host). */
    public static ProbeSession forFdImport(CudaDriver driver, int fd, long sizeBytes, int importerOrdinal, Long seed,
                                           Long writebackSeed) {
        ProbeSession s = new ProbeSession(driver, HandleType.POSIX_FD, sizeBytes, seed, writebackSeed, -1,
                importerOrdinal);
        s.importedFd = fd;
        return s;
    }

    /** A view of this exporter's session for checking a write-back pattern; it holds nothing of its own. */
    public ProbeSession withWritebackSeed(long writebackSeed) {
        ProbeSession view = new ProbeSession(driver, handleType, sizeBytes, null, writebackSeed, exporterOrdinal, -1);
        view.exporterMapping = exporterMapping;
        return view;
    }

    public FabricHandle fabricHandle() {
        return fabricHandle;
    }

    public int exportedFd() {
        return exportedFd;
    }

    public HandleType handleType() {
        return handleType;
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    public Long seed() {
        return seed;
    }

    public Long writebackSeed() {
        return writebackSeed;
    }

    public int exporterOrdinal() {
        return exporterOrdinal;
    }

    public int importerOrdinal() {
        return importerOrdinal;
    }

    boolean holdsExport() {
        return created != null;
    }
}
