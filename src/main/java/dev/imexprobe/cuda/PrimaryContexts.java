package dev.imexprobe.cuda;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.function.Supplier;

/**
 * When this process holds a GPU's primary context. A context costs a job ~520 MiB of GPU memory on an H200 and
 * makes the agent a compute process on the GPU, so it is held only while driver work for the GPU is in flight or
 * an allocation lives on it (a live export or import), plus a short linger so that one round's probes share one
 * context; then it is released. Retaining it again costs ~50 ms (~140 ms without CUDA_DEVICE_MAX_CONNECTIONS=1),
 * which the linger keeps to once per round. The shim retains lazily on the next device-bound call; this class
 * only decides when to let go.
 */
public final class PrimaryContexts {

    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "cuda-context-linger");
            t.setDaemon(true);
            return t;
        });
        // Work within the linger cancels the release scheduled before it; without this every cancelled release
        // stayed queued until its time, one per probe (a thousand at 500 probes a second and the 2 s linger).
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** Releases scheduled and not yet run or cancelled, on every GPU of every instance. */
    static int releasesQueued() {
        return TIMER.getQueue().size();
    }

    private final IntPredicate release;
    private volatile Duration linger;
    private final Map<Integer, Use> uses = new ConcurrentHashMap<>();

    /** How one GPU's context is used now. Guarded by its own monitor. */
    private static final class Use {
        int users;
        boolean held;
        long creations;
        long generation;
        ScheduledFuture<?> pending;
    }

    /** @param release drops the context of a GPU; true when one was held */
    public PrimaryContexts(IntPredicate release, Duration linger) {
        this.release = release;
        this.linger = linger;
    }

    public void linger(Duration linger) {
        if (linger.isNegative()) {
            throw new IllegalArgumentException("the context linger must not be negative: " + linger);
        }
        this.linger = linger;
    }

    public Duration linger() {
        return linger;
    }

    private Use use(int gpu) {
        return uses.computeIfAbsent(gpu, g -> new Use());
    }

    /** Driver work (or an allocation) on {@code gpu} begins: its context stays until the matching {@link #exit}. */
    public void enter(int gpu) {
        Use u = use(gpu);
        synchronized (u) {
            u.users++;
            u.generation++;
            if (u.pending != null) {
                u.pending.cancel(false);
                u.pending = null;
            }
            if (!u.held) {
                u.held = true;
                u.creations++;
            }
        }
    }

    public void exit(int gpu) {
        Use u = use(gpu);
        synchronized (u) {
            if (u.users == 0) {
                throw new IllegalStateException("GPU " + gpu + ": more exits than enters");
            }
            if (--u.users > 0) {
                return;
            }
            long generation = u.generation;
            Duration wait = linger;
            if (wait.isZero()) {
                releaseIfIdle(gpu, u, generation);
            } else {
                u.pending = TIMER.schedule(() -> releaseIfIdle(gpu, u, generation), wait.toNanos(),
                        TimeUnit.NANOSECONDS);
            }
        }
    }

    /** Runs driver work on {@code gpu} with its context held. */
    public <T> T with(int gpu, Supplier<T> work) {
        enter(gpu);
        try {
            return work.get();
        } finally {
            exit(gpu);
        }
    }

    /** Work that is worth doing only while the context is held anyway (e.g. cuMemGetInfo); else null. */
    public <T> T ifHeld(int gpu, Supplier<T> work) {
        Use u = use(gpu);
        synchronized (u) {
            if (!u.held) {
                return null;
            }
            u.users++;
            u.generation++;
            if (u.pending != null) {
                u.pending.cancel(false);
                u.pending = null;
            }
        }
        try {
            return work.get();
        } finally {
            exit(gpu);
        }
    }

    private void releaseIfIdle(int gpu, Use u, long generation) {
        synchronized (u) {
            // a call that began since is still using it, or will: keep it
            if (u.users == 0 && u.generation == generation && u.held) {
                release.test(gpu);
                u.held = false;
                u.pending = null;
            }
        }
    }

    /** Whether this process holds the GPU's context now (1 in imexprobe_cuda_context_held). */
    public boolean held(int gpu) {
        Use u = uses.get(gpu);
        if (u == null) {
            return false;
        }
        synchronized (u) {
            return u.held;
        }
    }

    /** Contexts made for this GPU since start (each an ~50 ms retain on the real driver). */
    public long creations(int gpu) {
        Use u = uses.get(gpu);
        if (u == null) {
            return 0;
        }
        synchronized (u) {
            return u.creations;
        }
    }

    /** Releases every idle context now (shutdown, tests). */
    public void releaseIdle() {
        uses.forEach((gpu, u) -> {
            synchronized (u) {
                if (u.users == 0 && u.held) {
                    if (u.pending != null) {
                        u.pending.cancel(false);
                    }
                    release.test(gpu);
                    u.held = false;
                    u.pending = null;
                }
            }
        });
    }
}
