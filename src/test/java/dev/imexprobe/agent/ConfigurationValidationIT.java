package dev.imexprobe.agent;

import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One invalid setting per case, in its environment form, given to a real agent: it must stop at start with a
 * non-zero exit and a log that names the property and the rule broken. The agents run a few at a time in
 * {@link #startAll}, since each needs a JVM and Spring's start; the cases then only read the outcome.
 */
class ConfigurationValidationIT {

    /** env (NAME=value, several separated by spaces), then texts the log must contain. */
    static final List<Case> CASES = List.of(
            new Case("IMEXPROBE_MESH_INTERVAL=10ms",
                    "imexprobe.mesh.interval must be at least 200ms, got PT0.01S"),
            new Case("IMEXPROBE_MESH_INTERVAL=soon",
                    "imexprobe.mesh.interval", "'soon' is not a valid duration"),
            new Case("IMEXPROBE_MESH_JITTER=0.9",
                    "imexprobe.mesh.jitter must be between 0 and 0.5, got 0.9"),
            new Case("IMEXPROBE_MESH_SUBSET=-1",
                    "imexprobe.mesh.subset must be 0 (all peers) or more, got -1"),
            new Case("IMEXPROBE_MESH_CONCURRENCY=0",
                    "imexprobe.mesh.concurrency must be 1..64, got 0"),
            new Case("IMEXPROBE_MESH_MAXBACKOFF=-5s",
                    "imexprobe.mesh.maxbackoff must not be negative, got PT-5S"),
            new Case("IMEXPROBE_MESH_SIZE=0",
                    "imexprobe.mesh.size must be positive, got 0"),
            new Case("IMEXPROBE_MESH_SIZE=3000000",
                    "imexprobe.mesh.size (IMEXPROBE_MESH_SIZE): 3000000 bytes is not a multiple of GPU 0's allocation "
                            + "granularity (2097152 bytes); leave it unset for the granularity of each GPU"),
            new Case("IMEXPROBE_AUTH_TOKEN=abcde",
                    "imexprobe.auth.token must be at least 16 characters (the chart generates 32); got 5"),
            new Case("IMEXPROBE_PEERS_STATIC=127.0.0.1:8081,gpu-node-2",
                    "imexprobe.peers.static: invalid peer address 'gpu-node-2': missing port",
                    "(fix the list: comma-separated host:port or [ipv6]:port)"),
            new Case("IMEXPROBE_PEERS_DNS=imexprobe.gpu-ops.svc",
                    "imexprobe.peers.dns: invalid peer address 'imexprobe.gpu-ops.svc': missing port"),
            new Case("IMEXPROBE_PEERS_KUBERNETES_SELECTOR=app=imexprobe IMEXPROBE_PEERS_KUBERNETES_PORT=0",
                    "imexprobe.peers.kubernetes.port must be 1..65535, got 0"),
            new Case("IMEXPROBE_PEERS_KUBERNETES_SELECTOR=app=imexprobe IMEXPROBE_PEERS_KUBERNETES_NAMESPACE=gpu-ops "
                    + "IMEXPROBE_PEERS_KUBERNETES_API=kubernetes.default.svc:443",
                    "imexprobe.peers.kubernetes.api must be an absolute http or https URL such as "
                            + "https://kubernetes.default.svc, got 'kubernetes.default.svc:443'"),
            new Case("IMEXPROBE_PEERS_KUBERNETES_SELECTOR=app=imexprobe",
                    "imexprobe.peers.kubernetes.namespace is empty", "set the namespace"));

    record Case(String env, String... expected) {
        Map<String, String> variables() {
            Map<String, String> out = new LinkedHashMap<>();
            for (String kv : env.split(" ")) {
                int eq = kv.indexOf('=');
                out.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
            return out;
        }

        String node() {
            return "bad-" + Integer.toHexString(env.hashCode());
        }

        @Override
        public String toString() {
            return env;
        }
    }

    record Outcome(int exitCode, String log) {
    }

    static MeshAgents agents;
    static final Map<Case, Outcome> OUTCOMES = new ConcurrentHashMap<>();

    @BeforeAll
    static void startAll() throws Exception {
        agents = MeshAgents.forTest(ConfigurationValidationIT.class);
        Map<Case, Agent> byCase = new LinkedHashMap<>();
        for (Case c : CASES) {
            byCase.put(c, agents.add(c.node(), c.variables()));
        }
        try (ExecutorService pool = Executors.newFixedThreadPool(3)) {
            List<Future<?>> runs = new ArrayList<>();
            for (Map.Entry<Case, Agent> e : byCase.entrySet()) {
                runs.add(pool.submit(() -> {
                    Agent a = e.getValue().start();
                    int code = a.awaitExit(Duration.ofSeconds(120));
                    if (code < 0) {
                        a.kill();
                    }
                    OUTCOMES.put(e.getKey(), new Outcome(code, a.logText()));
                }));
            }
            for (Future<?> f : runs) {
                f.get();
            }
        }
    }

    @AfterAll
    static void stop() {
        if (agents != null) {
            agents.close();
        }
    }

    static Stream<Arguments> cases() {
        return CASES.stream().map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void anInvalidSettingStopsTheAgentWithAMessageNamingPropertyAndRule(Case c) {
        Outcome o = OUTCOMES.get(c);

        assertThat(o.exitCode()).as("exit code (-1: still running after 120 s)").isPositive();
        assertThat(o.log()).as("the log of %s", c).contains(c.expected());
        assertThat(o.log()).as("it never served").doesNotContain("Started Main in");
    }
}
