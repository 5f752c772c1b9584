package dev.imexprobe.agent;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.Name;

import java.time.Duration;
import java.util.List;

/**
 * Everything an operator can set, validated while it is bound: a bad value stops the agent at start with a
 * message naming the property and the rule. Property segments are single words so that the environment form
 * (IMEXPROBE_MESH_INTERVAL) maps onto them.
 */
@ConfigurationProperties("imexprobe")
public record AgentProperties(@DefaultValue Auth auth, @DefaultValue Peers peers, @DefaultValue Mesh mesh,
                              @DefaultValue Node node, @DefaultValue Exports exports, @DefaultValue Driver driver,
                              @DefaultValue Probe probe, @DefaultValue Metrics metrics, @DefaultValue Ladder ladder) {

    public AgentProperties {
        auth = auth != null ? auth : new Auth(null, true);
        peers = peers != null ? peers : new Peers(List.of(), null, new Kubernetes(null, null, null, 8080));
        mesh = mesh != null ? mesh : new Mesh(Duration.ofSeconds(30), 0.2, 0, 4, Duration.ofSeconds(300), null);
        node = node != null ? node : new Node(null);
        exports = exports != null ? exports : new Exports(Duration.ofSeconds(60), 64, 1L << 30, 4L << 30);
        driver = driver != null ? driver : new Driver(Duration.ofSeconds(5), 16, Duration.ofSeconds(2), false,
                Duration.ofNanos(100_000), org.springframework.util.unit.DataSize.parse(
                dev.imexprobe.cuda.MemoryHeadroom.DEFAULT));
        probe = probe != null ? probe : new Probe(8, Duration.ofSeconds(10), 0, Duration.ofSeconds(30));
        metrics = metrics != null ? metrics : new Metrics(false);
        ladder = ladder != null ? ladder : new Ladder(false);
    }

    /**
     * @param token    the agents' shared secret (IMEXPROBE_AUTH_TOKEN), at least 16 characters
     * @param required when true (the default) and no token is set, export/import endpoints refuse everyone
     */
    public record Auth(String token, @DefaultValue("true") boolean required) {
        public Auth {
            if (token != null && !token.isBlank() && token.length() < 16) {
                throw new IllegalArgumentException("imexprobe.auth.token must be at least 16 characters "
                        + "(the chart generates 32); got " + token.length());
            }
            token = token == null || token.isBlank() ? null : token;
        }
    }

    public record Peers(@Name("static") List<String> staticList, String dns, @DefaultValue Kubernetes kubernetes) {
        public Peers {
            staticList = staticList == null ? List.of() : List.copyOf(staticList);
            kubernetes = kubernetes != null ? kubernetes : new Kubernetes(null, null, null, 8080);
        }
    }

    /**
     * @param api  API server base URL; default the in-cluster https://kubernetes.default.svc
     * @param port the agents' HTTP port on each pod
     */
    public record Kubernetes(String selector, String namespace, String api, @DefaultValue("8080") int port) {
        public Kubernetes {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("imexprobe.peers.kubernetes.port must be 1..65535, got " + port);
            }
            if (api != null && !api.isBlank() && !api.matches("(?i)https?://[^/\\s]+(/\\S*)?")) {
                throw new IllegalArgumentException("imexprobe.peers.kubernetes.api must be an absolute http or https "
                        + "URL such as https://kubernetes.default.svc, got '" + api + "'");
            }
        }
    }

    /**
     * @param interval    how often each pair is probed
     * @param jitter      fraction of the interval by which rounds are spread (0..0.5)
     * @param subset      probe only this many peers per round, chosen by rendezvous hashing among those that may
     *                    share an IMEX domain with ours (0 = all)
     * @param concurrency probes in flight at once during a round
     * @param maxbackoff  the longest an unreachable peer is left alone
     * @param size        bytes per mesh probe (default: the GPU's granularity)
     */
    public record Mesh(@DefaultValue("30s") Duration interval, @DefaultValue("0.2") double jitter,
                       @DefaultValue("0") int subset, @DefaultValue("4") int concurrency,
                       @DefaultValue("300s") Duration maxbackoff, Long size) {
        public Mesh {
            if (interval.compareTo(Duration.ofMillis(200)) < 0) {
                throw new IllegalArgumentException("imexprobe.mesh.interval must be at least 200ms, got " + interval);
            }
            if (jitter < 0 || jitter > 0.5) {
                throw new IllegalArgumentException("imexprobe.mesh.jitter must be between 0 and 0.5, got " + jitter);
            }
            if (subset < 0) {
                throw new IllegalArgumentException("imexprobe.mesh.subset must be 0 (all peers) or more, got " + subset);
            }
            if (maxbackoff.isNegative()) {
                // A negative backoff also shortens how long departed peers are remembered, down to forgetting
                // every pair at the end of the round that measured it.
                throw new IllegalArgumentException("imexprobe.mesh.maxbackoff must not be negative, got " + maxbackoff);
            }
            if (concurrency < 1 || concurrency > 64) {
                throw new IllegalArgumentException("imexprobe.mesh.concurrency must be 1..64, got " + concurrency);
            }
            if (size != null && size <= 0) {
                throw new IllegalArgumentException("imexprobe.mesh.size must be positive, got " + size);
            }
        }
    }

    public record Node(String name) {
    }

    public record Exports(@DefaultValue("60s") Duration ttl, @DefaultValue("64") int max,
                          @DefaultValue("1073741824") long maxbytes, @DefaultValue("4294967296") long totalbytes) {
        public Exports {
            if (ttl.isNegative() || ttl.isZero() || max < 1 || maxbytes < 1 || totalbytes < maxbytes) {
                throw new IllegalArgumentException("imexprobe.exports: ttl, max and maxbytes must be positive and "
                        + "totalbytes at least maxbytes (ttl=" + ttl + ", max=" + max + ", maxbytes=" + maxbytes
                        + ", totalbytes=" + totalbytes + ")");
            }
        }
    }

    /**
     * @param timeout deadline of each driver stage
     * @param threads the bounded pool driver calls run on
     * @param probeExclusiveProcess create a context on EXCLUSIVE_PROCESS GPUs after all: only where the operator keeps
     *                              them idle for the agent (its context would keep a job's out)
     * @param minFreeMemory the free memory (NVML's count) a GPU must have before the agent takes a context there:
     *                      below it a job is using the GPU, and the pair is not probed (GPU_MEMORY_IN_USE); 0 never
     *                      checks
     * @param spin    how long a thread handing work to the driver pool, or waiting on it, spins either side of the
     *                moment the wait is expected to end instead of parking through it (a parked thread's wake-up
     *                costs 30–100 µs on an idle server); 0 never spins. At most 2 × spin of CPU per hop and side,
     *                and only on a host of 4+ CPUs whose load average is below half of them.
     */
    public record Driver(@DefaultValue("5s") Duration timeout, @DefaultValue("16") int threads,
                         @DefaultValue("2s") Duration contextLinger,
                         @DefaultValue("false") boolean probeExclusiveProcess,
                         @DefaultValue("100us") Duration spin,
                         @DefaultValue(dev.imexprobe.cuda.MemoryHeadroom.DEFAULT)
                         org.springframework.util.unit.DataSize minFreeMemory) {
        public Driver {
            if (timeout.compareTo(Duration.ofMillis(10)) < 0 || threads < 1 || threads > 256
                    || contextLinger.isNegative() || spin.isNegative() || spin.compareTo(Duration.ofMillis(1)) > 0
                    || minFreeMemory.isNegative()) {
                throw new IllegalArgumentException("imexprobe.driver: timeout must be at least 10ms, threads "
                        + "1..256, context-linger not negative, spin 0..1ms and min-free-memory not negative (timeout="
                        + timeout + ", threads=" + threads + ", context-linger=" + contextLinger + ", spin=" + spin
                        + ", min-free-memory=" + minFreeMemory + ")");
            }
        }
    }

    /**
     * @param concurrency /probe requests served at once; more get 429 with Retry-After
     * @param timeout     deadline of each call to a peer agent
     * @param retryafter  seconds to put in Retry-After (0 = one mesh interval's worth, at least 1)
     */
    public record Probe(@DefaultValue("8") int concurrency, @DefaultValue("10s") Duration timeout,
                        @DefaultValue("0") int retryafter, @DefaultValue("30s") Duration maxtimeout) {
        public Probe {
            if (concurrency < 1 || timeout.isNegative() || timeout.isZero() || maxtimeout.isNegative()
                    || maxtimeout.isZero()) {
                throw new IllegalArgumentException("imexprobe.probe: concurrency must be at least 1, timeout and "
                        + "maxtimeout positive (concurrency=" + concurrency + ", timeout=" + timeout + ", maxtimeout="
                        + maxtimeout + ")");
            }
        }
    }

    /** @param pairs add source/target pair labels to the stage counters and histogram (cardinality!) */
    public record Metrics(@DefaultValue("false") boolean pairs) {
    }

    /** @param enabled serve POST /v1/ladder (admin only, token required) */
    public record Ladder(@DefaultValue("false") boolean enabled) {
    }

}
