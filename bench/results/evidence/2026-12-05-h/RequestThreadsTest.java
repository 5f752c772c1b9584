package dev.imexprobe.web;

import org.apache.tomcat.util.threads.TaskQueue;
import org.apache.tomcat.util.threads.TaskThreadFactory;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tomcat's request pool on RequestThreads' queue: it still makes a thread while none is idle and runs every task,
 * and requests that come one after another run on the thread that finished last, not on each thread in turn.
 */
class RequestThreadsTest {

    private final List<ThreadPoolExecutor> pools = new ArrayList<>();

    @AfterEach
    void close() {
        pools.forEach(ThreadPoolExecutor::shutdownNow);
    }

    private ThreadPoolExecutor pool(boolean lifo, int max) {
        ThreadPoolExecutor p;
        if (lifo) {
            p = RequestThreads.pool("test", 1, max, Integer.MAX_VALUE);
        } else { // Tomcat's own, for the contrast
            TaskQueue q = new TaskQueue();
            p = new ThreadPoolExecutor(1, max, 60, TimeUnit.SECONDS, q, new TaskThreadFactory("tomcat-", true, 5));
            q.setParent(p);
        }
        pools.add(p);
        return p;
    }

    /** {@code n} tasks held at once: the pool makes a thread for each. */
    private static Set<String> holdAtOnce(ThreadPoolExecutor pool, int n) throws Exception {
        CountDownLatch running = new CountDownLatch(n);
        CountDownLatch release = new CountDownLatch(1);
        Set<String> names = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                names.add(Thread.currentThread().getName());
                running.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        assertThat(running.await(10, TimeUnit.SECONDS)).as("all %d running at once", n).isTrue();
        release.countDown();
        return names;
    }

    /** Of {@code n} tasks run one after another, how many ran on the thread that ran the one before. */
    private static int stays(ThreadPoolExecutor pool, int n) throws Exception {
        String last = null;
        int stays = 0;
        for (int i = 0; i < n; i++) {
            CompletableFuture<String> f = new CompletableFuture<>();
            pool.execute(() -> f.complete(Thread.currentThread().getName()));
            String name = f.get(10, TimeUnit.SECONDS);
            stays += name.equals(last) ? 1 : 0;
            last = name;
            Thread.sleep(0, 200_000); // a request's round trip: the thread is back in the pool before the next
        }
        return stays;
    }

    @Test
    void successiveRequestsRunOnTheThreadThatFinishedLast() throws Exception {
        int threads = ThreadLocalRandom.current().nextInt(4, 9);
        int n = ThreadLocalRandom.current().nextInt(60, 121);
        ThreadPoolExecutor lifo = pool(true, 16);
        assertThat(holdAtOnce(lifo, threads)).hasSize(threads);
        int onLifo = stays(lifo, n);
        assertThat(onLifo).as("%d of %d on the last thread, %d idle", onLifo, n, threads).isGreaterThanOrEqualTo(n * 8 / 10);

        ThreadPoolExecutor tomcat = pool(false, 16);
        assertThat(holdAtOnce(tomcat, threads)).hasSize(threads);
        int onTomcat = stays(tomcat, n);
        assertThat(onTomcat).as("Tomcat's own queue: %d of %d", onTomcat, n).isLessThan(n / 2);
    }

    @Test
    void aBusyPoolStillGrowsToItsMaximumAndRunsEveryTask() throws Exception {
        int max = ThreadLocalRandom.current().nextInt(3, 9);
        ThreadPoolExecutor pool = pool(true, max);
        assertThat(holdAtOnce(pool, max)).hasSize(max);

        // More than the threads at once, from several submitters: every task runs, none waits while a thread idles.
        int tasks = max * ThreadLocalRandom.current().nextInt(5, 21);
        CountDownLatch done = new CountDownLatch(tasks);
        Set<Integer> ran = ConcurrentHashMap.newKeySet();
        List<Thread> submitters = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            int from = s;
            Thread t = new Thread(() -> {
                for (int i = from; i < tasks; i += 3) {
                    int id = i;
                    pool.execute(() -> {
                        ran.add(id);
                        done.countDown();
                    });
                }
            });
            submitters.add(t);
            t.start();
        }
        for (Thread t : submitters) {
            t.join(10_000);
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).as("%d tasks on %d threads", tasks, max).isTrue();
        assertThat(ran).hasSize(tasks);
        assertThat(pool.getPoolSize()).isLessThanOrEqualTo(max);
        assertThat(new HashSet<>(ran)).hasSize(tasks);
    }
}
