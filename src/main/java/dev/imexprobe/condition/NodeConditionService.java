package dev.imexprobe.condition;

import dev.imexprobe.mesh.PairState;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Judges and writes the condition on a thread of its own ({@code node-condition}), once per {@code interval},
 * reading the mesh's state: a slow or absent API server delays only this thread, never a probe round. Nothing is
 * judged before the mesh finished its first round.
 */
public final class NodeConditionService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NodeConditionService.class);

    private final NodeJudge judge;
    private final Supplier<List<PairState>> pairs;
    private final Supplier<Instant> lastRound;
    private final BooleanSupplier observer;
    private final BooleanSupplier noChannelByConfiguration;
    private final NodeConditionWriter writer;
    private final Duration interval;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "node-condition");
        t.setDaemon(true);
        return t;
    });

    public NodeConditionService(NodeJudge judge, Supplier<List<PairState>> pairs, Supplier<Instant> lastRound,
                                BooleanSupplier observer, BooleanSupplier noChannelByConfiguration,
                                NodeConditionWriter writer, Duration interval) {
        this.noChannelByConfiguration = noChannelByConfiguration;
        this.judge = judge;
        this.pairs = pairs;
        this.lastRound = lastRound;
        this.observer = observer;
        this.writer = writer;
        this.interval = interval;
    }

    public void start() {
        timer.scheduleWithFixedDelay(this::tick, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One judgement and, when due, one write. */
    public void tick() {
        try {
            boolean observing = observer.getAsBoolean();
            if (!observing && lastRound.get() == null) {
                return;
            }
            writer.offer(judge.judge(pairs.get(), observing, noChannelByConfiguration.getAsBoolean()));
        } catch (RuntimeException e) {
            log.warn("node condition not updated this round: {}", e.toString(), e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
