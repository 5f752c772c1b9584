package dev.imexprobe.ladder;

import dev.imexprobe.peer.AgentSignature;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.web.AgentAuthFilter;
import dev.imexprobe.web.LadderController;
import dev.imexprobe.web.Problems;
import dev.imexprobe.web.WireBodies;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.MediaType;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * POST /v1/ladder behind the agent's own auth filter and problem handler: off by default (404), admin only (401),
 * one at a time (429), and when it runs, the same ladder and document as {@code ladder --json}.
 */
class LadderControllerIT {

    private static final String TOKEN = "ladder-test-token-0123456789";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path tmp;

    private static MockMvc mvc(LadderController controller) {
        AgentAuthFilter auth = new AgentAuthFilter(new AgentSignature(TOKEN, Clock.systemUTC()), true);
        return MockMvcBuilders.standaloneSetup(controller).setControllerAdvice(new Problems(), new WireBodies())
                .setMessageConverters(new WireBodies.Converter(), new JacksonJsonHttpMessageConverter(JSON))
                .addFilters(auth).build();
    }

    private static LadderReport empty() {
        return new LadderReport("n", true, null, null, null, null, List.of(), null, List.of(), 0, 0);
    }

    private static JsonNode json(MvcResult r) throws Exception {
        return JSON.readTree(r.getResponse().getContentAsString());
    }

    @Test
    void offByDefaultItAnswers404ProblemJsonAndRunsNothing() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        MvcResult r = mvc(new LadderController(false, o -> {
            runs.incrementAndGet();
            return empty();
        })).perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)).andReturn();
        assertThat(r.getResponse().getStatus()).isEqualTo(404);
        assertThat(r.getResponse().getContentType()).startsWith(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        assertThat(json(r).get("type").asString()).isEqualTo("urn:imexprobe:problem:ladder-disabled");
        assertThat(json(r).get("detail").asString()).contains("imexprobe.ladder.enabled=true");
        assertThat(runs).hasValue(0);
    }

    @Test
    void withoutTheTokenItAnswers401BeforeAnything() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        MockMvc mvc = mvc(new LadderController(true, o -> {
            runs.incrementAndGet();
            return empty();
        }));
        assertThat(mvc.perform(post("/v1/ladder")).andReturn().getResponse().getStatus()).isEqualTo(401);
        assertThat(mvc.perform(post("/v1/ladder").header("Authorization", "Bearer wrong-token-0123456789"))
                .andReturn().getResponse().getStatus()).isEqualTo(401);
        assertThat(runs).hasValue(0);
    }

    @Test
    void badFieldsAre400WithTheRule() throws Exception {
        MockMvc mvc = mvc(new LadderController(true, o -> empty()));
        MvcResult same = mvc.perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)
                .contentType(MediaType.APPLICATION_JSON).content("{\"gpus\":\"1,1\"}")).andReturn();
        assertThat(same.getResponse().getStatus()).isEqualTo(400);
        assertThat(json(same).get("detail").asString()).contains("two different GPUs");
        MvcResult unknown = mvc.perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)
                .contentType(MediaType.APPLICATION_JSON).content("{\"rungs\":3}")).andReturn();
        assertThat(unknown.getResponse().getStatus()).isEqualTo(400);
        assertThat(json(unknown).get("detail").asString()).contains("unknown field 'rungs'");
        MvcResult timeout = mvc.perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)
                .contentType(MediaType.APPLICATION_JSON).content("{\"timeoutSeconds\":0}")).andReturn();
        assertThat(timeout.getResponse().getStatus()).isEqualTo(400);
        assertThat(json(timeout).get("detail").asString())
                .isEqualTo("timeoutSeconds must be 1..180 (the longest wait for one worker answer), got 0");
    }

    @Test
    void aSecondRequestWhileOneRunsGets429WithRetryAfter() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MockMvc mvc = mvc(new LadderController(true, o -> {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return empty();
        }));
        CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> {
            try {
                return mvc.perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)).andReturn()
                        .getResponse().getStatus();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(entered.await(60, TimeUnit.SECONDS)).isTrue();
        MvcResult second = mvc.perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)).andReturn();
        release.countDown();
        assertThat(second.getResponse().getStatus()).isEqualTo(429);
        assertThat(second.getResponse().getHeader("Retry-After")).isEqualTo("30");
        assertThat(json(second).get("type").asString()).isEqualTo("urn:imexprobe:problem:busy");
        assertThat(first.get(60, TimeUnit.SECONDS)).isEqualTo(200);
        // Once the first finished, the next one runs.
        assertThat(mvc.perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)).andReturn()
                .getResponse().getStatus()).isEqualTo(200);
    }

    @Test
    void itRunsTheRealLadderWithTheRequestsOptionsAndReturnsItsDocument() throws Exception {
        FakeMachine m = FakeMachine.h200WithoutChannel(tmp.resolve("machine"));
        AtomicReference<LadderOptions> asked = new AtomicReference<>();
        Ladder ladder = new Ladder(WorkerLauncher.forThisJvm(LadderOnFakeMachineIT.env(m)), "agent-node");
        MvcResult r = mvc(new LadderController(true, o -> {
            asked.set(o);
            return ladder.run(o);
        })).perform(post("/v1/ladder").header("Authorization", "Bearer " + TOKEN)
                .contentType(MediaType.APPLICATION_JSON).content("{\"sizeBytes\":4194304,\"gpus\":\"0\"}")).andReturn();
        assertThat(r.getResponse().getStatus()).isEqualTo(200);
        JsonNode doc = json(r);
        assertThat(asked.get().budget()).isEqualTo(java.time.Duration.ofMinutes(3));
        assertThat(doc.get("sizeBytes").asLong()).isEqualTo(4194304);
        assertThat(doc.get("node").asString()).isEqualTo("agent-node");
        assertThat(doc.get("verdict").get("code").asString()).isEqualTo("LADDER_FAILS_IN_ONE_PROCESS");
        JsonNode zero = doc.get("rungs").get(0);
        assertThat(zero.get("rung").asString()).isEqualTo("0");
        assertThat(zero.get("results").get(0).get("failedStage").get("cuResult").asInt()).isEqualTo(800);
        assertThat(asked.get().exporterGpu()).isZero();
        assertThat(asked.get().importerGpu()).isNull();
        assertThat(doc.get("rungs").get(2).get("results").get(0).get("reason").asString())
                .isEqualTo("needs a second GPU: the driver shows 1 GPU");
        assertThat(doc.get("exitCode").asInt()).isEqualTo(1);
        assertThat(m.stateFiles()).isEmpty();
    }
}
