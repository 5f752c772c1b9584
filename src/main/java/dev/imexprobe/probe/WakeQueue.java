package dev.imexprobe.probe;

import java.util.AbstractQueue;
import java.util.Collection;
import java.util.Iterator;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The driver pool's bounded queue, with one addition to a plain blocking queue: a task can be announced
 * before it is submitted ({@link #expect}). One idle worker is then woken ahead of time, parks until shortly
 * before the task is due and spins for it, so that the hand-off costs no wake-up from the CPU's idle state
 * (30–100 µs on an idle server, twice per hop). Without an announcement, or with {@code spinNanos} 0, it
 * behaves as an {@link java.util.concurrent.ArrayBlockingQueue}: an idle worker parks until a task is offered.
 * Spinning is bounded: at most one worker, at most {@code 2 × spinNanos} per announcement (the spin in effect
 * when it is made).
 */
final class WakeQueue extends AbstractQueue<Runnable> implements BlockingQueue<Runnable> {

    private final ConcurrentLinkedQueue<Runnable> items = new ConcurrentLinkedQueue<>();
    private final AtomicInteger count = new AtomicInteger();
    private final int capacity;
    private final LongSupplier spinNanos;
    /**
     * Idle workers parked for a task, in the order they parked. The most recently parked is woken first: on an
     * H100 a self-probe's driver calls took 0.63–0.73 times as long from one thread as alternating between two,
     * cuMemCreate under half (docs/performance.md, session 2026-12-05 h). The others stay parked: {@link
     * DriverExecutor} keeps its threads, since a pool below its core size starts a fresh thread for each new task.
     */
    private final ConcurrentLinkedDeque<Thread> parked = new ConcurrentLinkedDeque<>();
    /** Workers spinning for a task: an offer wakes nobody while one does (the spinner passes on what it leaves). */
    private final AtomicInteger spinning = new AtomicInteger();
    /**
     * Workers between a finished task and their next look at the queue ({@link #finished}): an offer wakes nobody
     * while one is, since that worker, the one that ran last, takes the task (and passes on what it leaves).
     */
    private final AtomicInteger returning = new AtomicInteger();
    private final ThreadLocal<boolean[]> owesReturn = ThreadLocal.withInitial(() -> new boolean[1]);
    /** An announcement made while a worker was returning: that worker spins for it when it is back. */
    private volatile boolean armReturning;
    /** The worker woken for an announced task, and when it spins for it (System.nanoTime). */
    private final AtomicReference<Thread> armed = new AtomicReference<>();
    private volatile long spinFrom;
    private volatile long spinUntil;

    WakeQueue(int capacity, LongSupplier spinNanos) {
        this.capacity = capacity;
        this.spinNanos = spinNanos;
    }

    /**
     * A task is expected in about {@code inNanos}: have a worker spinning from {@code spinNanos} before until
     * {@code spinNanos} after. A hint only; a task that comes earlier or later is taken up as without it.
     */
    void expect(long inNanos) {
        long spin = spinNanos.getAsLong();
        if (spin <= 0) {
            return;
        }
        long now = System.nanoTime();
        spinFrom = now + inNanos - spin;
        spinUntil = now + Math.max(inNanos, 0) + spin;
        Thread t = armed.get();
        if (t == null) {
            if (returning.get() > 0) {
                armReturning = true;
                return;
            }
            armReturning = false;
            t = parked.pollLast();
            if (t == null) {
                return;
            }
            if (!armed.compareAndSet(null, t)) {
                LockSupport.unpark(t); // another announcement armed a worker first: this one looks again and parks
                return;
            }
        }
        LockSupport.unpark(t); // it parks again until the window opens; woken now, its wake-up is off the path
    }

    @Override
    public boolean offer(Runnable r) {
        if (count.incrementAndGet() > capacity) {
            count.decrementAndGet();
            return false;
        }
        items.offer(r);
        wakeOne();
        return true;
    }

    /**
     * The calling worker is about to finish its task and will look at the queue next, with nothing on the way that
     * can block. Until it does, an offered task waits for it instead of waking another: the driver's calls stay on
     * one thread when a caller submits its next list the moment the last one ended. Once per task; a second call
     * before the worker looks again counts nothing.
     */
    void finished() {
        boolean[] owes = owesReturn.get();
        if (!owes[0]) {
            owes[0] = true;
            returning.incrementAndGet();
        }
    }

    /** The calling worker, though {@link #finished}, will not look at the queue again (its task threw: it ends). */
    void leaving() {
        boolean[] owes = owesReturn.get();
        if (owes[0]) {
            owes[0] = false;
            returning.decrementAndGet();
            if (!items.isEmpty()) {
                wakeOne(); // offered meanwhile for this worker to take
            }
        }
    }

    private void wakeOne() {
        if (spinning.get() > 0 || returning.get() > 0) {
            return;
        }
        // A worker an announcement woke and that is not spinning yet (still waking up, or parked until its window)
        // takes the task: waking another as well made two race for it, and the one that ran last could lose it.
        // It is armed only inside poll, and clears that before it returns a task (then taken() passes this on).
        Thread a = armed.get();
        if (a != null) {
            LockSupport.unpark(a);
            return;
        }
        Thread t = parked.pollLast();
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public Runnable poll() {
        Runnable r = items.poll();
        if (r != null) {
            count.decrementAndGet();
        }
        return r;
    }

    @Override
    public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        Thread me = Thread.currentThread();
        boolean[] owes = owesReturn.get();
        // A returning worker stays counted as returning until it is in `parked` (or has a task, or spins): an offer
        // in between wakes nobody, and this worker's look after it joined `parked` finds the task. Counted out
        // earlier, such an offer woke the last parked worker instead, which then parked again behind this one: the
        // next list went to it, and one caller's lists moved between two threads.
        if (owes[0] && armReturning && armed.compareAndSet(null, me)) {
            armReturning = false; // announced while it returned: this worker spins for it
        }
        // Whether this worker is in `parked`. It stays there, in its place, through a wake-up that no offer or
        // announcement made (park may return for no reason, or for a permit an earlier unpark left). Taken out and
        // put back at the end, such a worker became the most recently parked, and the next offer woke it instead
        // of the one that ran last; while it was out, an offer woke another. Either moved a caller's lists.
        boolean listed = false;
        for (;;) {
            if (Thread.interrupted()) {
                unlist(me, listed);
                settle(owes);
                armed.compareAndSet(me, null);
                if (!items.isEmpty()) {
                    wakeOne(); // offered while this worker was counted as looking: another takes it
                }
                throw new InterruptedException();
            }
            Runnable r = poll();
            if (r != null) {
                unlist(me, listed);
                settle(owes);
                armed.compareAndSet(me, null);
                return taken(r);
            }
            long now = System.nanoTime();
            long wait = deadline - now;
            if (armed.get() == me) {
                long from = spinFrom;
                long until = spinUntil;
                if (now - until >= 0) {
                    armed.compareAndSet(me, null);
                } else if (now - from >= 0) {
                    unlist(me, listed);
                    listed = false;
                    r = spin(until, owes);
                    if (r != null) {
                        armed.compareAndSet(me, null);
                        return taken(r);
                    }
                    continue;
                } else {
                    wait = Math.min(wait, from - now);
                }
            }
            if (deadline - now <= 0) {
                unlist(me, listed);
                settle(owes);
                armed.compareAndSet(me, null);
                if (!items.isEmpty()) {
                    wakeOne(); // offered while this worker was counted as looking: another takes it
                }
                return null;
            }
            if (!listed) {
                parked.addLast(me);
                listed = true;
                settle(owes);
                r = poll();
                if (r != null) {
                    unlist(me, true);
                    armed.compareAndSet(me, null);
                    return taken(r);
                }
            }
            LockSupport.parkNanos(this, wait);
            listed = parked.contains(me); // out: an offer or an announcement took it out to wake it
        }
    }

    /**
     * Takes the worker out of {@code parked} when it is there. An offer that took it out meanwhile to wake it woke
     * no one else: {@link #taken} then passes that task on.
     */
    private void unlist(Thread me, boolean listed) {
        if (listed) {
            parked.remove(me);
        }
    }

    /** The worker no longer counts as returning (see {@link #poll(long, TimeUnit)}). */
    private void settle(boolean[] owes) {
        if (owes[0]) {
            owes[0] = false;
            returning.decrementAndGet();
        }
    }

    private Runnable spin(long until, boolean[] owes) {
        spinning.incrementAndGet();
        settle(owes); // counted as spinning first: an offer in between still wakes nobody
        Runnable r;
        try {
            while ((r = poll()) == null && System.nanoTime() - until < 0 && !Thread.currentThread().isInterrupted()) {
                Thread.onSpinWait();
            }
        } finally {
            spinning.decrementAndGet();
        }
        if (r == null) {
            r = poll(); // offered just as the spinning ended: the offer saw a spinner and woke nobody
        }
        return r;
    }

    /**
     * A worker took {@code r}; if more wait, it wakes one more worker. Offers made while a worker spun or returned
     * woke nobody, so each taker passes one on, and the next does the same: none waits while a worker is idle.
     */
    private Runnable taken(Runnable r) {
        if (!items.isEmpty()) {
            wakeOne();
        }
        return r;
    }

    @Override
    public Runnable take() throws InterruptedException {
        Runnable r;
        while ((r = poll(Long.MAX_VALUE / 2, TimeUnit.NANOSECONDS)) == null) {
            // not reached in practice: the wait is centuries
        }
        return r;
    }

    @Override
    public void put(Runnable r) throws InterruptedException {
        while (!offer(r)) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            LockSupport.parkNanos(this, 100_000);
        }
    }

    @Override
    public boolean offer(Runnable r, long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!offer(r)) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            LockSupport.parkNanos(this, 100_000);
        }
        return true;
    }

    @Override
    public Runnable peek() {
        return items.peek();
    }

    @Override
    public boolean remove(Object o) {
        if (items.remove(o)) {
            count.decrementAndGet();
            return true;
        }
        return false;
    }

    @Override
    public Iterator<Runnable> iterator() {
        Iterator<Runnable> it = items.iterator();
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public Runnable next() {
                return it.next();
            }

            @Override
            public void remove() {
                it.remove();
                count.decrementAndGet();
            }
        };
    }

    @Override
    public int size() {
        return Math.max(0, count.get());
    }

    @Override
    public int remainingCapacity() {
        return Math.max(0, capacity - count.get());
    }

    @Override
    public int drainTo(Collection<? super Runnable> c) {
        return drainTo(c, Integer.MAX_VALUE);
    }

    @Override
    public int drainTo(Collection<? super Runnable> c, int max) {
        int n = 0;
        Runnable r;
        while (n < max && (r = poll()) != null) {
            c.add(r);
            n++;
        }
        return n;
    }
}
