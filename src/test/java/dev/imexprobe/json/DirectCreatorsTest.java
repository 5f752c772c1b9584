package dev.imexprobe.json;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

import dev.imexprobe.api.ImportReply;
import dev.imexprobe.api.ImportRequest;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class DirectCreatorsTest {

    /** Jackson's own path, as before the module. */
    private static final JsonMapper PLAIN = JsonMapper.builder().build();

    private static final ThreadLocal<Boolean> THROUGH_INVOKE_WITH_ARGUMENTS = new ThreadLocal<>();

    /** A record that notes how Jackson called its constructor. */
    record Probe(String name, int count) {
        Probe {
            THROUGH_INVOKE_WITH_ARGUMENTS.set(Arrays.stream(new Throwable().getStackTrace())
                    .anyMatch(f -> f.getMethodName().equals("invokeWithArguments")));
        }
    }

    record Checked(String name, int count) {
        Checked {
            if (count < 0) {
                throw new IllegalArgumentException("count must not be negative, was " + count);
            }
        }
    }

    record Factory(String name, long size) {
        @JsonCreator
        static Factory of(@JsonProperty("name") String name, @JsonProperty("size") long size) {
            return new Factory(name.toUpperCase(java.util.Locale.ROOT), size * 2);
        }
    }

    @Test
    void ourRecordsAreMadeWithoutInvokeWithArgumentsWhereJacksonUsesIt() {
        byte[] json = bytes("{'name':'a','count':3}");
        // Jackson's own path: if this fails, a Jackson upgrade no longer calls creators this way; drop the module.
        Probe plain = PLAIN.readValue(json, Probe.class);
        assertThat(THROUGH_INVOKE_WITH_ARGUMENTS.get()).isTrue();
        Probe direct = Json.MAPPER.readValue(json, Probe.class);
        assertThat(THROUGH_INVOKE_WITH_ARGUMENTS.get()).isFalse();
        assertThat(direct).isEqualTo(plain).isEqualTo(new Probe("a", 3));
    }

    @Test
    void springsJsonMapperGetsTheModule() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class))
                .withUserConfiguration(JsonConfiguration.class)
                .run(context -> {
                    Probe read = context.getBean(JsonMapper.class).readValue(bytes("{'name':'b','count':-4}"),
                            Probe.class);
                    assertThat(THROUGH_INVOKE_WITH_ARGUMENTS.get()).isFalse();
                    assertThat(read).isEqualTo(new Probe("b", -4));
                });
    }

    @Test
    void aCreatorsExceptionFailsAsOnJacksonsOwnPath() {
        byte[] json = bytes("{'name':'a','count':-1}");
        Throwable plain = failure(PLAIN, json, Checked.class);
        Throwable direct = failure(Json.MAPPER, json, Checked.class);
        assertThat(plain).isNotNull();
        assertThat(direct).isNotNull().hasSameClassAs(plain).hasMessage(plain.getMessage());
        assertThat(direct.getMessage()).contains("count must not be negative, was -1");
        assertThat(direct.getCause()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStaticFactoryCreatorIsCalledToo() {
        assertThat(Json.MAPPER.readValue(bytes("{'name':'x','size':21}"), Factory.class))
                .isEqualTo(new Factory("X", 42));
        // A primitive left out fails before the creator is called, either way.
        Throwable plain = failure(PLAIN, bytes("{'name':'y'}"), Factory.class);
        assertThat(plain).isNotNull();
        assertThat(failure(Json.MAPPER, bytes("{'name':'y'}"), Factory.class)).hasSameClassAs(plain)
                .hasMessage(plain.getMessage());
    }

    @Test
    void randomRepliesReadTheSameBothWays() {
        Random random = new Random();
        for (int i = 0; i < 300; i++) {
            ImportReply reply = randomReply(random);
            byte[] json = PLAIN.writeValueAsBytes(reply);
            ImportReply direct = Json.MAPPER.readValue(json, ImportReply.class);
            assertThat(direct).isEqualTo(PLAIN.readValue(json, ImportReply.class)).isEqualTo(reply);
        }
    }

    @Test
    void randomImportBodiesReadOrFailTheSameBothWays() {
        Random random = new Random();
        String handle = Base64.getEncoder().encodeToString(new byte[64]);
        Object[][] choices = {
                {"'" + handle + "'", "'short'", "7", "null", "[]"},
                {"'FABRIC'", "'POSIX'", "1", "null"},
                {"2097152", "'2097152'", "-1", "1.5", "'x'", "null", "{}"},
                {"0", "'GPU-1'", "-3", "true", "null"},
                {"'-9223372036854775808'", "5", "'x'", "1e3", "null"},
                {"'7'", "8", "[1]", "null"},
                {"'node-a'", "3", "null"},
                {"'GPU-0'", "false", "null"},
        };
        String[] names = {"handle", "handleType", "sizeBytes", "gpu", "seed", "writebackSeed", "exporterNode",
                "exporterGpu"};
        int failed = 0;
        for (int i = 0; i < 400; i++) {
            StringBuilder body = new StringBuilder("{");
            for (int f = 0; f < names.length; f++) {
                if (random.nextInt(4) == 0) {
                    continue;
                }
                Object[] values = choices[f];
                body.append(body.length() > 1 ? "," : "").append("'").append(names[f]).append("':")
                        .append(values[random.nextInt(values.length)]);
            }
            String text = body.append("}").toString();
            byte[] json = bytes(text);
            Throwable plainFailure = failure(PLAIN, json, ImportRequest.class);
            Throwable directFailure = failure(Json.MAPPER, json, ImportRequest.class);
            if (plainFailure == null) {
                assertThat(directFailure).as(text).isNull();
                assertThat(Json.MAPPER.readValue(json, ImportRequest.class)).as(text)
                        .isEqualTo(PLAIN.readValue(json, ImportRequest.class));
            } else {
                failed++;
                assertThat(directFailure).as(text).isNotNull().hasSameClassAs(plainFailure)
                        .hasMessage(plainFailure.getMessage());
            }
        }
        assertThat(failed).as("some bodies must fail to read, or the comparison says little").isBetween(40, 399);
    }

    private static Throwable failure(JsonMapper mapper, byte[] json, Class<?> type) {
        try {
            mapper.readValue(json, type);
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static ImportReply randomReply(Random random) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage stage : Stage.values()) {
            if (random.nextInt(5) == 0) {
                continue;
            }
            boolean driver = random.nextBoolean();
            stages.add(new StageResult(stage, pick(random, StageStatus.values()),
                    driver ? random.nextInt(1000) : null, driver ? "CUDA_ERROR_" + random.nextInt(99) : null,
                    random.nextDouble() / (1 + random.nextInt(1000)), random.nextBoolean() ? "detail " + i(random)
                            : null));
        }
        Finding finding = null;
        if (random.nextBoolean()) {
            Map<String, Object> evidence = new LinkedHashMap<>();
            for (int k = random.nextInt(5); k > 0; k--) {
                evidence.put("k" + i(random), switch (random.nextInt(3)) {
                    case 0 -> i(random);
                    case 1 -> "v" + i(random);
                    default -> random.nextBoolean();
                });
            }
            finding = new Finding("CODE_" + i(random), pick(random, Severity.values()), pick(random, Blame.values()),
                    "cause " + i(random), "remedy " + i(random), evidence);
        }
        return new ImportReply(pick(random, Verdict.values()), random.nextDouble(),
                random.nextBoolean() ? "node-" + i(random) : null, "agent-" + i(random), random.nextInt(8),
                random.nextBoolean() ? "GPU-" + i(random) : null, stages, finding);
    }

    private static int i(Random random) {
        return random.nextInt(1_000_000);
    }

    private static <T> T pick(Random random, T[] values) {
        return values[random.nextInt(values.length)];
    }

    private static byte[] bytes(String s) {
        return s.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
    }
}
