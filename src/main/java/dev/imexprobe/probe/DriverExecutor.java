package dev.imexprobe.probe;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs driver work on a bounded pool of platform threads with a deadline per task. A driver call that hangs
 * keeps its thread (nothing can interrupt it) but not the caller: the caller gets {@link Outcome#timedOut} after
 * the deadline, and the stuck thread's later result goes to the task's own clean-up. When every thread is
 * stuck, new work is refused at once instead of queueing behind them.
 */
public final class DriverExecutor implements AutoCloseable {

    private final ThreadPoolExecutor pool;
    private final Duration timeout;
    private final AtomicInteger stuck = new AtomicInteger();

    public DriverExecutor(int threads, Duration timeout) {
        if (threads < 1) {
            throw new IllegalArgumentException("the driver pool needs at least one thread");
        }
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "driver-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(threads * 4), factory, new ThreadPoolExecutor.AbortPolicy());
        this.pool.allowCoreThreadTimeOut(true);
        this.timeout = timeout;
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
    public <T> Outcome<T> run(Supplier<T> work, java.util.function.Consumer<T> abandoned) {
        CompletableFuture<T> future = new CompletableFuture<>();
        try {
            pool.execute(() -> {
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
            stuck.incrementAndGet();
            future.whenComplete((value, error) -> {
                stuck.decrementAndGet();
                if (abandoned != null) {
                    abandoned.accept(value); // null when the work threw: the clean-up still runs
                }
            });
            return new Outcome<>(null, true, false, null);
        } catch (ExecutionException e) {
            return new Outcome<>(null, false, false, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome<>(null, true, false, e);
        }
    }

    /**
     * Starts {@code work} on a driver thread without waiting for it; false when the pool refuses it (every thread
     * taken and the queue full). Whoever waits for such work keeps its deadlines and, when it gives up on a call,
     * reports it through {@link #stuckCallStarted} and {@link #stuckCallReturned}.
     */
    boolean start(Runnable work) {
        try {
            pool.execute(work);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    void stuckCallStarted() {
        stuck.incrementAndGet();
    }

    void stuckCallReturned() {
        stuck.decrementAndGet();
    }

    public Duration timeout() {
        return timeout;
    }

    /** Driver calls that passed their deadline and have not returned yet. */
    public int stuck() {
        return stuck.get();
    }

    public int active() {
        return pool.getActiveCount();
    }

    public int threads() {
        return pool.getMaximumPoolSize();
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
