package dev.imexprobe.cuda;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An agent takes no GPU memory from jobs while idle: it holds a GPU's primary context only while it probes (plus
 * the linger), never from start to exit. The fake driver logs every context it makes and destroys in the agent's
 * process (FAKECUDA_CONTEXT_LOG), as nvidia-smi would list the agent as a compute process; the agent's own gauge
 * imexprobe_cuda_context_held must say the same.
 */
class ContextLifecycleIT {

    private static final Duration LINGER = Duration.ofMillis(700);

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess a;
    static AgentProcess b;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        a = AgentProcess.start("a", dir.resolve("a"), machine.env(), "node-a", Map.of(
                "FAKECUDA_CONTEXT_LOG", dir.resolve("a-contexts.log").toString(),
                "IMEXPROBE_DRIVER_CONTEXTLINGER", LINGER.toMillis() + "ms"));
        b = AgentProcess.start("b", dir.resolve("b"), machine.env(), "node-b", Map.of(
                "FAKECUDA_CONTEXT_LOG", dir.resolve("b-contexts.log").toString(),
                "IMEXPROBE_DRIVER_CONTEXTLINGER", LINGER.toMillis() + "ms"));
        AgentProcess.awaitReady(a, b);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a, b);
    }

    private static List<String> log(String agent) {
        Path p = dir.resolve(agent + "-contexts.log");
        try {
            return Files.exists(p) ? Files.readAllLines(p) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long count(List<String> log, String what) {
        return log.stream().filter(l -> l.startsWith(what + " ")).count();
    }

    @Test
    void aContextOnlyWhileProbingThenNone() {
        // ready, /v1/node answered, inventory taken: no context was ever made
        assertThat(a.get("/v1/node").status()).isEqualTo(200);
        assertThat(log("a")).as("contexts made by an idle agent").isEmpty();
        assertThat(log("b")).isEmpty();
        assertThat(a.metric("imexprobe_cuda_context_held")).isEqualTo(0.0);

        int probes = 2 + new java.util.Random().nextInt(3);
        for (int i = 0; i < probes; i++) {
            AgentProcess.Reply r = a.get("/probe?target=" + b.hostPort() + "&direction=both");
            assertThat(r.json().get("verdict").asString()).as(r.body()).isEqualTo("pass");
        }
        // within the linger both still hold one, made once for all the probes
        assertThat(count(log("a"), "create")).isEqualTo(1);
        assertThat(count(log("b"), "create")).isEqualTo(1);
        assertThat(a.metric("imexprobe_cuda_context_creations_total")).isEqualTo(1.0);

        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            assertThat(count(log("a"), "destroy")).as("a released its context").isEqualTo(1);
            assertThat(count(log("b"), "destroy")).as("b released its context").isEqualTo(1);
        });
        assertThat(a.metric("imexprobe_cuda_context_held")).isEqualTo(0.0);
        assertThat(b.metric("imexprobe_cuda_context_held")).isEqualTo(0.0);
        assertThat(a.liveAllocations()).isZero();

        // the next round makes a new one, and lets it go again
        assertThat(a.get("/probe?target=" + b.hostPort() + "&direction=push").json().get("verdict").asString())
                .isEqualTo("pass");
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                assertThat(count(log("a"), "destroy")).isEqualTo(2));
        assertThat(count(log("a"), "create")).isEqualTo(2);
        assertThat(a.metric("imexprobe_cuda_context_creations_total")).isEqualTo(2.0);
    }

    @Test
    void aLiveExportKeepsItsContextUntilReleased() {
        AgentProcess.Reply made = b.post("/v1/exports", "{}");
        assertThat(made.status()).isEqualTo(201);
        String id = made.json().get("id").asString();
        long destroyedBefore = count(log("b"), "destroy");
        try {
            Thread.sleep(LINGER.toMillis() * 3);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(count(log("b"), "destroy")).as("kept while the export lives").isEqualTo(destroyedBefore);
        assertThat(b.metric("imexprobe_cuda_context_held")).isEqualTo(1.0);
        assertThat(b.delete("/v1/exports/" + id).status()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                assertThat(count(log("b"), "destroy")).isEqualTo(destroyedBefore + 1));
        assertThat(b.metric("imexprobe_cuda_context_held")).isEqualTo(0.0);
    }
}
