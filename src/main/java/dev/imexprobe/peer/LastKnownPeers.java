package dev.imexprobe.peer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The "last known good" memory shared by the sources that look something up: a failed lookup keeps serving the
 * previous set and records why it failed. Logs only on transitions (healthy → failing, failing → healthy), so a
 * source that stays down does not write a line every mesh interval.
 */
final class LastKnownPeers {

    private static final Logger LOG = LoggerFactory.getLogger(LastKnownPeers.class);

    /** A lookup that either returns the full current set or fails with a message naming cause and next step. */
    @FunctionalInterface
    interface Lookup {
        Set<PeerAddress> fetch() throws DiscoveryException;
    }

    private record State(Set<PeerAddress> peers, Instant lastSuccess, String lastError, Instant lastErrorAt,
                         int consecutiveFailures) {
    }

    private final String source;
    private final Clock clock;
    // One lookup at a time: concurrent callers wait for the running one (bounded by the source's timeout)
    // rather than hitting the API server in parallel or overwriting a newer result with an older one.
    private final ReentrantLock lock = new ReentrantLock();
    private volatile State state = new State(Set.of(), null, null, null, 0);

    LastKnownPeers(String source, Clock clock) {
        this.source = source;
        this.clock = clock;
    }

    Set<PeerAddress> refresh(Lookup lookup) {
        lock.lock();
        try {
            State before = state;
            String error;
            try {
                Set<PeerAddress> fresh = Collections.unmodifiableSet(new LinkedHashSet<>(lookup.fetch()));
                state = new State(fresh, clock.instant(), before.lastError, before.lastErrorAt, 0);
                if (before.consecutiveFailures > 0) {
                    LOG.info("peer discovery '{}' recovered after {} failed attempt(s): {} peer(s)", source,
                            before.consecutiveFailures, fresh.size());
                }
                return fresh;
            } catch (DiscoveryException e) {
                error = e.getMessage();
            } catch (RuntimeException e) {
                // A bug or an unexpected answer must not take the mesh down: treat it like any failed lookup.
                error = "unexpected " + e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            state = new State(before.peers, before.lastSuccess, error, clock.instant(), before.consecutiveFailures + 1);
            if (before.consecutiveFailures == 0) {
                LOG.warn("peer discovery '{}' failed, keeping the last known {} peer(s): {}", source,
                        before.peers.size(), error);
            }
            return before.peers;
        } finally {
            lock.unlock();
        }
    }

    Set<PeerAddress> current() {
        return state.peers;
    }

    DiscoveryStatus status() {
        State s = state;
        return new DiscoveryStatus(source, s.lastSuccess, s.lastError, s.lastErrorAt, s.consecutiveFailures,
                s.peers.size());
    }
}
