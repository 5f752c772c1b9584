package dev.imexprobe.web;

import org.apache.catalina.Lifecycle;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.apache.coyote.ProtocolHandler;
import org.apache.tomcat.util.threads.TaskQueue;
import org.apache.tomcat.util.threads.TaskThreadFactory;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Tomcat's request threads, the most recently idle one taken first. Tomcat's own queue wakes its idle threads in
 * turn (the waiters of a {@link java.util.concurrent.LinkedBlockingQueue}), so requests that come one after another
 * rotate over every thread it has made, each cold in the CPU's caches; and since none then idles for the keep-alive,
 * none ends. This pool is Tomcat's own executor (its sizing, thread creation up to the maximum before queueing, and
 * keep-alive of 60 s) with one difference: the queue hands a request to the thread that finished last
 * (docs/performance.md, session 2026-12-05 h, says what it saved).
 */
final class RequestThreads {

    private RequestThreads() {
    }

    /** Installs the pool on {@code handler}, sized as Tomcat's would be. */
    static void install(ProtocolHandler handler, int minSpare, int max, int queueCapacity) {
        handler.setExecutor(pool(handler instanceof AbstractProtocol<?> p ? p.getName() : "http", minSpare, max,
                queueCapacity));
    }

    /** Tomcat's pool as its endpoint makes it (AbstractEndpoint.createExecutor), on this class's queue. */
    static ThreadPoolExecutor pool(String name, int minSpare, int max, int queueCapacity) {
        Queue queue = new Queue(queueCapacity);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(minSpare, max, 60, TimeUnit.SECONDS, queue,
                new TaskThreadFactory(name + "-exec-", true, Thread.NORM_PRIORITY));
        queue.setParent(pool);
        return pool;
    }

    /** An executor set from outside is not Tomcat's to end: it ends with the connector. */
    static void endWith(Connector connector) {
        connector.addLifecycleListener(event -> {
            if (Lifecycle.AFTER_DESTROY_EVENT.equals(event.getType())
                    && connector.getProtocolHandler().getExecutor() instanceof ThreadPoolExecutor pool
                    && pool.getQueue() instanceof Queue) {
                pool.shutdownNow();
            }
        });
    }

    /**
     * Tomcat's {@link TaskQueue} (whose {@code offer} makes the pool start a thread while none is idle) with its
     * waiting done here: idle threads wait in a stack, and an offer wakes the top one.
     */
    static final class Queue extends TaskQueue {

        private final transient ConcurrentLinkedDeque<Thread> idle = new ConcurrentLinkedDeque<>();

        Queue(int capacity) {
            super(capacity);
        }

        @Override
        public boolean offer(Runnable r) {
            if (!super.offer(r)) {
                return false; // the pool starts a thread for it instead
            }
            wakeOne();
            return true;
        }

        @Override
        public boolean force(Runnable r) {
            if (!super.force(r)) {
                return false;
            }
            wakeOne();
            return true;
        }

        private void wakeOne() {
            Thread t = idle.pollLast();
            if (t != null) {
                LockSupport.unpark(t);
            }
        }

        @Override
        public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
            Runnable r = await(unit.toNanos(timeout));
            // Timed out: Tomcat's own last look, which also ends a thread it renews after a context stopped.
            return r != null ? r : super.poll(0, TimeUnit.NANOSECONDS);
        }

        @Override
        public Runnable take() throws InterruptedException {
            Runnable r;
            while ((r = await(Long.MAX_VALUE / 2)) == null) {
                // not reached in practice: the wait is centuries
            }
            return r;
        }

        private Runnable await(long nanos) throws InterruptedException {
            long deadline = System.nanoTime() + nanos;
            Thread me = Thread.currentThread();
            for (;;) {
                Runnable r = super.poll();
                if (r != null) {
                    return taken(r);
                }
                long wait = deadline - System.nanoTime();
                if (wait <= 0) {
                    return null;
                }
                idle.addLast(me);
                r = super.poll();
                if (r != null) {
                    idle.remove(me);
                    return taken(r);
                }
                LockSupport.parkNanos(this, wait);
                idle.remove(me); // still there unless an offer took it to wake it
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        }

        /** More waiting than threads woken for them (an offer raced a thread's return): wake one more. */
        private Runnable taken(Runnable r) {
            if (!isEmpty()) {
                wakeOne();
            }
            return r;
        }
    }
}
