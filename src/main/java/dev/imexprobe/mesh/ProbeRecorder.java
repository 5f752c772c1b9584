package dev.imexprobe.mesh;

import dev.imexprobe.probe.PairResult;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every pair result, from the mesh or from /probe, goes through here: into the mesh state and to listeners.
 *
 * <p>/probe records after its answer ({@link #recordAfter}, on one recorder thread, in order) so that its caller
 * does not wait for the metrics; whoever reads what is recorded (the web layer, before any request but the
 * probe's own two) first calls {@link #drain}, so a read right after a /probe still sees its result. The direct
 * route promises its batch before its answer goes out and hands it over after ({@link #promise}): the hand-off
 * wakes the recorder thread, which its caller then does not wait for either.
 */
public final class ProbeRecorder implements AutoCloseable {

    /** A reader waits at most this long for the recorder (a listener that never returns must not hang reads). */
    private static final long DRAIN_MAX_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final ThreadPoolExecutor later = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "probe-recorder");
                t.setDaemon(true);
                return t;
            });
    /** Batches promised, and the highest number up to which every batch is recorded. */
    private final AtomicLong promised = new AtomicLong();
    private volatile long finished;
    /** Under progress: batches recorded past finished (handed over before an earlier promise was kept). */
    private final Set<Long> ahead = new HashSet<>();
    private final Object progress = new Object();

    /** Something that wants every result (the metrics). */
    public interface Listener {
        void onResult(PairResult result);

        /** A mesh round ended; pairs of departed peers are forgotten by now. */
        default void onCycleFinished() {
        }

        /** Between rounds, pairs of peers that left discovery were forgotten. */
        default void onPairsForgotten() {
        }
    }

    private final MeshState state;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    public ProbeRecorder(MeshState state) {
        this.state = state;
    }

    public void addListener(Listener l) {
        listeners.add(l);
    }

    public MeshState state() {
        return state;
    }

    /** Marks the end of a mesh round in the state, then tells the listeners. */
    public void cycleFinished() {
        state.cycleFinished();
        for (Listener l : listeners) {
            l.onCycleFinished();
        }
    }

    /** Tells the listeners that pairs were forgotten between rounds (not a round's end: no cycle is counted). */
    public void pairsForgotten() {
        for (Listener l : listeners) {
            l.onPairsForgotten();
        }
    }

    /**
     * Records {@code results} on the recorder thread, after the caller's answer: what {@link #record} does,
     * in the order given. A reader calls {@link #drain} first.
     */
    public void recordAfter(List<PairResult> results) {
        promise().record(results);
    }

    /**
     * A batch to come: readers that {@link #drain} from now on wait for it (at most 2 s), so its results may be
     * handed over after the answer that carries them is out. Whoever takes a promise keeps it, in a finally.
     */
    public Promise promise() {
        return new Promise(promised.incrementAndGet());
    }

    /** One batch of results, promised; {@link #record} hands it to the recorder thread. */
    public final class Promise {
        private final long n;
        private boolean kept;

        private Promise(long n) {
            this.n = n;
        }

        /** Hands the results over (none when the probe answered with an error); only the first call counts. */
        public void record(List<PairResult> results) {
            if (kept) {
                return;
            }
            kept = true;
            try {
                later.execute(() -> recordBatch(n, results));
            } catch (RejectedExecutionException e) { // closing: record here
                recordBatch(n, results);
            }
        }
    }

    private void recordBatch(long n, List<PairResult> results) {
        try {
            results.forEach(this::record);
        } finally {
            synchronized (progress) {
                ahead.add(n);
                while (ahead.remove(finished + 1)) {
                    finished = finished + 1;
                }
                progress.notifyAll();
            }
        }
    }

    /**
     * Returns once every batch promised before this call is recorded (at most 2 s): a barrier for readers of the
     * mesh state and the metrics. Free when nothing is pending.
     */
    public void drain() {
        long target = promised.get();
        if (finished >= target) {
            return;
        }
        long end = System.nanoTime() + DRAIN_MAX_NANOS;
        boolean interrupted = false;
        synchronized (progress) {
            long left;
            while (finished < target && (left = end - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(progress, left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        later.shutdown();
        try {
            later.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public void record(PairResult r) {
        state.record(r);
        if (r.verdict() == dev.imexprobe.probe.Verdict.NOT_PROBED) {
            return; // nothing ran: no probe to count, no pair series (as for the mesh's own not-probed pairs)
        }
        for (Listener l : listeners) {
            l.onResult(r);
        }
    }
}
