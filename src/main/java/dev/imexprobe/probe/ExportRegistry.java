package dev.imexprobe.probe;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The exports this agent holds for its peers: fresh pattern buffers, each released on DELETE, on expiry of
 * its TTL, or at shutdown. Caps are reserved before any driver call, so concurrent requests cannot exceed them.
 */
public final class ExportRegistry implements AutoCloseable {

    /** The exporter's half of an exchange (the ladder's exporting worker runs it too). */
    public static final List<ProbeStage> EXPORT_STAGES = List.of(new CreateStage(), new ExportStage());
    private static final ReleaseStage RELEASE = new ReleaseStage();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final CudaDriver driver;
    private final StageEngine engine;
    private final ExportLimits limits;
    private final Clock clock;
    private final ContextGuard guard;
    private final Map<String, Export> exports = new ConcurrentHashMap<>();
    /** Set by {@link #close}; an export made after it is released at once (guarded by this). */
    private boolean closed;
    private final ScheduledExecutorService sweeper;
    private int reservedCount;
    private int manualCount;
    private long reservedBytes;

    /**
     * Who an export is for. The agents' own probes (the mesh, /probe, a peer's pull) release theirs within
     * milliseconds; an operator's manual export lives its whole TTL, so manual ones may never take the slots
     * {@link ExportLimits#reservedForProbes()} keeps for probes.
     */
    public enum Holder { PROBE, MANUAL }

    /** A live export. */
    public record Export(String id, ProbeSession session, int gpu, long sizeBytes, Instant expiresAt, Holder holder) {
    }

    /**
     * The outcome of a create: the export when it succeeded, and the stages either way; {@code refused} when no
     * stage ran because no context may be created on the GPU ({@link ContextGuard}).
     */
    public record Created(Export export, List<StageResult> stages, dev.imexprobe.finding.Finding refused) {
        public Created(Export export, List<StageResult> stages) {
            this(export, stages, null);
        }

        public boolean ok() {
            return export != null;
        }
    }

    /**
     * Thrown before any driver call when a cap would be exceeded. {@code full}: the agent holds all it may now
     * (retry once some expire); else the request alone asks for more than one export may hold.
     */
    public static final class CapExceededException extends RuntimeException {
        private final boolean full;

        public CapExceededException(String message, boolean full) {
            super(message);
            this.full = full;
        }

        public boolean full() {
            return full;
        }
    }

    public ExportRegistry(CudaDriver driver, StageEngine engine, ExportLimits limits, Clock clock) {
        this(driver, engine, limits, clock, ContextGuard.NONE);
    }

    public ExportRegistry(CudaDriver driver, StageEngine engine, ExportLimits limits, Clock clock, ContextGuard guard) {
        this.guard = guard;
        this.driver = driver;
        this.engine = engine;
        this.limits = limits;
        this.clock = clock;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "export-expiry");
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::expire, 1, 1, TimeUnit.SECONDS);
    }

    public ExportLimits limits() {
        return limits;
    }

    /** An export for a probe (the mesh, /probe, a peer's pull). */
    public Created create(int gpu, long sizeBytes, long seed) {
        return create(gpu, sizeBytes, seed, Holder.PROBE);
    }

    public Created create(int gpu, long sizeBytes, long seed, Holder holder) {
        dev.imexprobe.finding.Finding refused = guard.refusal(gpu);
        if (refused != null) {
            return new Created(null, ContextGuard.skipped(List.of(Stage.CREATE, Stage.EXPORT, Stage.RELEASE), refused),
                    refused);
        }
        reserve(sizeBytes, holder);
        ProbeSession session = new ProbeSession(driver, HandleType.FABRIC, sizeBytes, seed, null, gpu, -1);
        List<StageResult> stages = new ArrayList<>(engine.run(session, EXPORT_STAGES));
        if (!StageEngine.passed(stages)) {
            return notKept(session, stages, holder);
        }
        String id = newId();
        Export export = new Export(id, session, gpu, sizeBytes, clock.instant().plus(limits.ttl()), holder);
        if (!register(id, export)) {
            return notKept(session, stages, holder); // the agent is stopping: close() released all, this one too
        }
        return new Created(export, List.copyOf(stages));
    }

    /** An allocation not kept (its create failed, or the registry closed meanwhile): released now, its cap freed. */
    private Created notKept(ProbeSession session, List<StageResult> stages, Holder holder) {
        stages.addAll(engine.run(session, List.of(RELEASE)));
        unreserve(session.sizeBytes(), holder);
        return new Created(null, List.copyOf(stages));
    }

    public Export get(String id) {
        Export e = id == null ? null : exports.get(id);
        return e == null || expired(e) ? null : e;
    }

    /** The exporter's half of write-back: does the export now hold the pattern of {@code seed}? Null if unknown. */
    public StageResult verify(String id, long seed) {
        Export e = get(id);
        if (e == null) {
            return null;
        }
        return engine.run(e.session().withWritebackSeed(seed), List.of(new WritebackStage(WritebackStage.Side.CHECK))).getFirst();
    }

    /**
     * The write-back check and the release of a probe's export as one list on one driver thread (one hop, not
     * two): what {@link #verify} then {@link #release} would report, the check's result first. The release runs
     * whatever the check found; the check is skipped when {@code seed} is null. Null when there is no such export.
     */
    public List<StageResult> checkAndRelease(String id, Long seed) {
        StageEngine.Pending p = startCheckAndRelease(id, seed);
        return p == null ? null : p.await();
    }

    /**
     * {@link #checkAndRelease} handed to the driver pool without waiting: the exporter starts it when the
     * importer's answer begins (the importer sends its head once it is done with the memory) and reads the
     * answer meanwhile. Null when there is no such export.
     */
    public StageEngine.Pending startCheckAndRelease(String id, Long seed) {
        Export e = id == null ? null : exports.remove(id);
        if (e == null) {
            return null;
        }
        unreserve(e.sizeBytes(), e.holder());
        if (seed == null || expired(e)) { // verify answers nothing for an expired export; release still runs
            return engine.start(e.session(), List.of(RELEASE));
        }
        return engine.start(e.session(), List.of(new OnView(e.session().withWritebackSeed(seed), WRITEBACK_CHECK),
                RELEASE));
    }

    private static final WritebackStage WRITEBACK_CHECK = new WritebackStage(WritebackStage.Side.CHECK);

    /** A stage run on another view of the same session (the check reads through the export's own mapping). */
    private record OnView(ProbeSession view, ProbeStage inner) implements ProbeStage {
        @Override
        public Stage stage() {
            return inner.stage();
        }

        @Override
        public StageOutcome run(ProbeSession ignored) {
            return inner.run(view);
        }
    }

    /** Driver work of this registry (a write-back check and release) is due in about {@code inNanos}. */
    public void expectWork(long inNanos) {
        engine.executor().expect(inNanos);
    }

    /** Releases an export now; null when there is no such export. */
    public StageResult release(String id) {
        Export e = exports.remove(id);
        if (e == null) {
            return null;
        }
        unreserve(e.sizeBytes(), e.holder());
        return engine.run(e.session(), List.of(RELEASE)).getFirst();
    }

    public int size() {
        return exports.size();
    }

    public long bytesHeld() {
        synchronized (this) {
            return reservedBytes;
        }
    }

    private synchronized void reserve(long bytes, Holder holder) {
        if (bytes > limits.maxBytes()) {
            throw new CapExceededException("an export may hold at most " + limits.maxBytes() + " bytes; "
                    + bytes + " asked", false);
        }
        int manualMax = limits.maxExports() - limits.reservedForProbes();
        if (holder == Holder.MANUAL && limits.reservedForProbes() > 0 && manualCount + 1 > manualMax) {
            throw new CapExceededException("this agent already holds " + manualCount + " manual exports, the most "
                    + "it allows (" + limits.reservedForProbes() + " of its " + limits.maxExports() + " slots are kept "
                    + "for probes); retry after some expire (TTL " + limits.ttl().toSeconds() + " s) or DELETE them",
                    true);
        }
        if (reservedCount + 1 > limits.maxExports()) {
            throw new CapExceededException("this agent already holds " + reservedCount
                    + " exports, the most it allows; retry after some expire (TTL " + limits.ttl().toSeconds() + " s)",
                    true);
        }
        if (reservedBytes + bytes > limits.totalBytes()) {
            throw new CapExceededException("exports would hold " + (reservedBytes + bytes) + " bytes, more than the "
                    + limits.totalBytes() + " this agent allows", true);
        }
        reservedCount++;
        reservedBytes += bytes;
        if (holder == Holder.MANUAL) {
            manualCount++;
        }
    }

    private synchronized void unreserve(long bytes, Holder holder) {
        reservedCount--;
        reservedBytes -= bytes;
        if (holder == Holder.MANUAL) {
            manualCount--;
        }
    }

    private boolean expired(Export e) {
        return !clock.instant().isBefore(e.expiresAt());
    }

    void expire() {
        for (Export e : List.copyOf(exports.values())) {
            if (expired(e)) {
                release(e.id());
            }
        }
    }

    private static String newId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** Keeps an export unless the registry closed meanwhile (a create still running when the agent stopped). */
    private synchronized boolean register(String id, Export export) {
        if (closed) {
            return false;
        }
        exports.put(id, export);
        return true;
    }

    /** Releases every export: at shutdown nothing may stay allocated on the GPU, nor be kept after. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        sweeper.shutdownNow();
        for (String id : List.copyOf(exports.keySet())) {
            release(id);
        }
    }
}
