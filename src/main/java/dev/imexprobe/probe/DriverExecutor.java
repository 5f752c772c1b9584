package dev.imexprobe.probe;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Runs driver work on a bounded pool of platform threads with a deadline per task. A driver call that hangs
 * keeps its thread (nothing can interrupt it) but not the caller: the caller gets {@link Outcome#timedOut} after
 * the deadline, and the stuck thread's later result goes to the task's own clean-up. When every thread is
 * stuck, new work is refused at once instead of queueing behind them.
 */
public final class DriverExecutor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DriverExecutor.class);

    private final ThreadPoolExecutor pool;
    private final WakeQueue queue;
    private final long spinNanos;
    /** From an announcement to its submission, by kind of request; and this thread's pending announcement. */
    private final Expected gaps = new Expected();
    private final ThreadLocal<Announcement> announcement = new ThreadLocal<>();
    private final BooleanSupplier cpusToSpare;
    private volatile boolean spare;
    private volatile boolean checked;
    private volatile long spareCheckedAt = System.nanoTime() - 2_000_000_000L;
    private final Duration timeout;
    /** Tasks whose caller stopped waiting and that have not completed, queued or inside the driver. */
    private final Set<Task> abandoned = ConcurrentHashMap.newKeySet();

    /** One submitted piece of work: when a driver thread took it up (null while queued). */
    private static final class Task {
        volatile Instant runningSince;
    }

    /** One thread for releases the pool refused: what a probe acquired is given back even when no thread is free. */
    private final ThreadPoolExecutor cleanup = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "driver-cleanup");
                t.setDaemon(true);
                return t;
            });

    public DriverExecutor(int threads, Duration timeout) {
        this(threads, timeout, Duration.ZERO);
    }

    /**
     * @param spin how long a thread waiting for the pool (a worker for its next task, a caller for its result)
     *             spins before and after the moment the wait is expected to end, instead of parking through it:
     *             a parked thread's wake-up costs 30–100 µs on an idle server. Zero: never spin.
     */
    public DriverExecutor(int threads, Duration timeout, Duration spin) {
        this(threads, timeout, spin, DriverExecutor::cpusToSpare);
    }

    /** @param cpusToSpare whether a spinning thread takes no CPU that other work waits for (asked once a second) */
    DriverExecutor(int threads, Duration timeout, Duration spin, BooleanSupplier cpusToSpare) {
        this.cpusToSpare = cpusToSpare;
        if (threads < 1) {
            throw new IllegalArgumentException("the driver pool needs at least one thread");
        }
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new DriverThread(this, r, "driver-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.spinNanos = Math.max(0, spin.toNanos());
        this.queue = new WakeQueue(threads * 4, this::spinNanos);
        // All threads start now and are kept while idle: the queue hands work to the one that ran last, and a pool
        // below its core size would start a fresh thread for each new task instead (so would one that let idle
        // threads end). Parked, they cost their stacks only.
        this.pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, queue, factory,
                new ThreadPoolExecutor.AbortPolicy()) {
            @Override
            protected void afterExecute(Runnable r, Throwable t) {
                if (t == null) {
                    queue.finished();
                } else {
                    queue.leaving(); // a worker whose task threw ends instead of looking at the queue again
                }
            }
        };
        this.timeout = timeout;
        this.pool.prestartAllCoreThreads();
    }

    /** A thread of this pool's. */
    private static final class DriverThread extends Thread {
        final DriverExecutor pool;

        DriverThread(DriverExecutor pool, Runnable r, String name) {
            super(r, name);
            this.pool = pool;
        }
    }

    /**
     * Called by a task on this pool's thread just before it lets its caller go on, when all that is left of it
     * are returns: work the caller submits next then goes to this thread rather than waking another. A no-op on
     * any other thread.
     */
    void returning() {
        if (Thread.currentThread() instanceof DriverThread t && t.pool == this) {
            queue.finished();
        }
    }

    /**
     * Announces driver work due in about {@code inNanos}: an idle worker is woken now and spins for it around
     * then, so that taking it up costs no wake-up. A hint; without it (or with spin 0) a worker is woken on submit.
     */
    public void expect(long inNanos) {
        queue.expect(inNanos);
    }

    /**
     * Announces driver work that this thread will submit, as a request of {@code kind} did the last times: due
     * after the median of their gaps from announcement to submission (2 × spin the first time). The thread's
     * next {@link #start} records the gap; {@link #announced} forgets an announcement nothing followed.
     */
    public void announce(Object kind) {
        long spin = spinNanos();
        if (spin <= 0) {
            return;
        }
        long gap = gaps.estimate(kind);
        expect(gap >= 0 ? gap : spin);
        announcement.set(new Announcement(kind, System.nanoTime()));
    }

    /** The request that announced work has ended: a later submission of this thread belongs to another. */
    public void announced() {
        announcement.remove();
    }

    /** The gap {@link #announce} expects for {@code kind}, -1 before the first. */
    long expectedGap(Object kind) {
        return gaps.estimate(kind);
    }

    private record Announcement(Object kind, long at) {
    }

    private void submitted() {
        Announcement a = announcement.get();
        if (a != null) {
            announcement.remove();
            gaps.record(a.kind(), System.nanoTime() - a.at());
        }
    }

    /**
     * The spin in effect now, in nanoseconds: the setting while the host has CPUs to spare (at least 4, its
     * 1-minute load average below half of them), else 0: on a busy node a spinning thread would take CPU from the jobs and
     * from the very thread it waits for, so waits park as without the setting.
     */
    public long spinNanos() {
        if (spinNanos <= 0) {
            return 0;
        }
        long now = System.nanoTime();
        if (now - spareCheckedAt > 1_000_000_000L) {
            spareCheckedAt = now;
            boolean was = spare;
            spare = cpusToSpare.getAsBoolean();
            if (spare != was || !checked) {
                checked = true;
                LOG.info("driver pool: {} (imexprobe.driver.spin {} µs; load average {} on {} CPUs)",
                        spare ? "waits spin near their expected end" : "waits park: no CPU to spare for spinning",
                        spinNanos / 1000, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                        Runtime.getRuntime().availableProcessors());
            }
        }
        return spare ? spinNanos : 0;
    }

    /**
     * At least 4 CPUs and a 1-minute load average below half of them: an exchange may have two threads spinning
     * (a caller and a worker) beside the two doing the work. On 2 vCPUs at load 0.7–1 spinning made a hand-off
     * slower, not quicker (Micro's handOff: 59 → 175 µs p50): a spinner took the CPU the working thread needed.
     */
    private static boolean cpusToSpare() {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        int cpus = Runtime.getRuntime().availableProcessors();
        return cpus >= 4 && load >= 0 && load < cpus / 2.0;
    }

    /** The result of one task: its value, or why there is none. */
    public record Outcome<T>(T value, boolean timedOut, boolean rejected, Throwable error) {

        public boolean ok() {
            return !timedOut && !rejected && error == null;
        }
    }

    /**
     * Runs {@code work} and waits at most the deadline. If the caller stops waiting, {@code abandoned} receives
     * the value (null if it threw) whenever the work finally completes, to release what it acquired.
     */
    public <T> Outcome<T> run(Supplier<T> work, Consumer<T> abandoned) {
        if (exhausted()) {
            return new Outcome<>(null, false, true, null); // queued behind calls that may never return: refuse now
        }
        CompletableFuture<T> future = new CompletableFuture<>();
        Task task = new Task();
        try {
            pool.execute(() -> {
                task.runningSince = Instant.now();
                try {
                    future.complete(work.get());
                } catch (Throwable t) {
                    future.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            return new Outcome<>(null, false, true, null);
        }
        try {
            return new Outcome<>(future.get(timeout.toNanos(), TimeUnit.NANOSECONDS), false, false, null);
        } catch (TimeoutException e) {
            abandon(task, future, abandoned);
            return new Outcome<>(null, true, false, null);
        } catch (ExecutionException e) {
            return new Outcome<>(null, false, false, e.getCause());
        } catch (InterruptedException e) {
            // The caller stops waiting, the work does not: its clean-up must still run when it returns.
            abandon(task, future, abandoned);
            Thread.currentThread().interrupt();
            return new Outcome<>(null, true, false, e);
        }
    }

    private <T> void abandon(Task task, CompletableFuture<T> future, Consumer<T> cleanUp) {
        abandoned.add(task);
        future.whenComplete((value, error) -> {
            abandoned.remove(task);
            if (cleanUp != null) {
                cleanUp.accept(value); // null when the work threw: the clean-up still runs
            }
        });
    }

    /**
     * Runs a release the pool refused on the clean-up thread, in order, without a deadline: it only gives back
     * what a probe acquired, and must run even while every pool thread is held.
     */
    public void cleanUp(Runnable release) {
        cleanup.execute(release);
    }

    /**
     * Starts {@code work} on a driver thread without waiting for it; false when the pool refuses it (every thread
     * held by a call past its deadline, or every thread taken and the queue full). Whoever waits for such work
     * keeps its deadlines and, when it gives up on a call, reports it through {@link #stuckCallStarted} and
     * {@link #stuckCallReturned}.
     */
    boolean start(Runnable work) {
        submitted();
        if (exhausted()) {
            return false;
        }
        try {
            pool.execute(work);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /**
     * A call started through {@link #start} that its caller gave up on is still inside the driver: counted as stuck
     * once it passes the driver's deadline, {@code overdueInNanos} from now (0: it has; more when the caller gave up
     * at an earlier deadline of its own, a probe's).
     */
    Object stuckCallStarted(long overdueInNanos) {
        Task task = new Task();
        task.runningSince = Instant.now().plusNanos(Math.max(0, overdueInNanos));
        abandoned.add(task);
        return task;
    }

    void stuckCallReturned(Object call) {
        abandoned.remove(call);
    }

    public Duration timeout() {
        return timeout;
    }

    /**
     * Driver calls that passed their deadline and have not returned yet: each holds a driver thread. Work still
     * queued when its caller gave up is not counted; it runs, and cleans up after itself, once a thread is free.
     */
    public int stuck() {
        int stuck = 0;
        Instant now = null;
        for (Task t : abandoned) {  // a loop, not a stream: asked on every request (docs/performance.md)
            Instant since = t.runningSince;
            if (since != null && !since.isAfter(now != null ? now : (now = Instant.now()))) {
                stuck++;
            }
        }
        return stuck;
    }

    /** When the oldest call still stuck in the driver was taken up; empty when none is. */
    public Optional<Instant> oldestStuckSince() {
        Instant now = Instant.now();
        return abandoned.stream().map(t -> t.runningSince).filter(Objects::nonNull).filter(t -> !t.isAfter(now))
                .min(Instant::compareTo);
    }

    /**
     * Every thread is inside a call that passed its deadline: no driver work can run until one returns, and a
     * call the driver never returns (seen on the H200: cuMemMap of an altered FABRIC handle) holds its thread and
     * what it had acquired until the process exits.
     */
    public boolean exhausted() {
        return stuck() >= pool.getMaximumPoolSize();
    }

    public int active() {
        return pool.getActiveCount();
    }

    public int threads() {
        return pool.getMaximumPoolSize();
    }

    @Override
    public void close() {
        // New work is refused; what was handed over runs to its end, for a queued list may be the release of what a
        // probe holds (an exporter's check and release, waiting while the agent stops). Calls stuck in the driver
        // never end: the wait stops once only they are left, and at the latest after one deadline.
        pool.shutdown();
        cleanup.shutdown();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (!pool.awaitTermination(10, TimeUnit.MILLISECONDS)) {
                boolean onlyStuck = queue.isEmpty() && pool.getActiveCount() <= stuck();
                if (onlyStuck || System.nanoTime() - deadline >= 0) {
                    break;
                }
            }
            cleanup.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pool.shutdownNow();
    }
}
