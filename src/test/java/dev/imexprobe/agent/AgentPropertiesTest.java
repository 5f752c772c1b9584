package dev.imexprobe.agent;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The rules each property record enforces, with the message an operator sees (ConfigurationValidationIT: the agent). */
class AgentPropertiesTest {

    private static AgentProperties.Mesh mesh(String interval, double jitter, int subset, int concurrency,
                                             String maxBackoff, Long size) {
        return new AgentProperties.Mesh(Duration.parse(interval), jitter, subset, concurrency,
                Duration.parse(maxBackoff), size);
    }

    @Test
    void theDefaultsAreValid() {
        AgentProperties p = new AgentProperties(null, null, null, null, null, null, null, null, null);

        assertThat(p.mesh().interval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(p.mesh().maxbackoff()).isEqualTo(Duration.ofSeconds(300));
        assertThat(p.auth().required()).isTrue();
    }

    @Test
    void meshRules() {
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT0.01S", 0.2, 0, 4, "PT300S", null))
                .withMessage("imexprobe.mesh.interval must be at least 200ms, got PT0.01S");
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", 0.9, 0, 4, "PT300S", null))
                .withMessage("imexprobe.mesh.jitter must be between 0 and 0.5, got 0.9");
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", -0.1, 0, 4, "PT300S", null))
                .withMessageStartingWith("imexprobe.mesh.jitter must be between 0 and 0.5");
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", 0.2, -1, 4, "PT300S", null))
                .withMessage("imexprobe.mesh.subset must be 0 (all peers) or more, got -1");
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", 0.2, 0, 0, "PT300S", null))
                .withMessage("imexprobe.mesh.concurrency must be 1..64, got 0");
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", 0.2, 0, 65, "PT300S", null))
                .withMessage("imexprobe.mesh.concurrency must be 1..64, got 65");
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", 0.2, 0, 4, "PT-5S", null))
                .withMessage("imexprobe.mesh.maxbackoff must not be negative, got PT-5S");
        assertThat(mesh("PT10M", 0.2, 0, 4, "PT300S", null).maxbackoff())
                .as("an interval longer than the backoff is fine: every round retries").isEqualTo(Duration.ofMinutes(5));
        assertThatIllegalArgumentException().isThrownBy(() -> mesh("PT30S", 0.2, 0, 4, "PT300S", 0L))
                .withMessage("imexprobe.mesh.size must be positive, got 0");
        assertThat(mesh("PT0.2S", 0.5, 3, 64, "PT0.2S", 2097152L).subset()).isEqualTo(3);
    }

    @Test
    void tokenRule() {
        assertThatIllegalArgumentException().isThrownBy(() -> new AgentProperties.Auth("abcde", true))
                .withMessage("imexprobe.auth.token must be at least 16 characters (the chart generates 32); got 5");
        assertThat(new AgentProperties.Auth("  ", true).token()).isNull();
        assertThat(new AgentProperties.Auth("0123456789abcdef", true).token()).isEqualTo("0123456789abcdef");
    }

    @Test
    void kubernetesRules() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new AgentProperties.Kubernetes("app=imexprobe", "ns", null, 0))
                .withMessage("imexprobe.peers.kubernetes.port must be 1..65535, got 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new AgentProperties.Kubernetes("app=imexprobe", "ns", "localhost:6443", 8080))
                .withMessage("imexprobe.peers.kubernetes.api must be an absolute http or https URL such as "
                        + "https://kubernetes.default.svc, got 'localhost:6443'");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new AgentProperties.Kubernetes("app=imexprobe", "ns", "https://a b", 8080))
                .withMessageStartingWith("imexprobe.peers.kubernetes.api must be an absolute http or https URL");
        assertThat(new AgentProperties.Kubernetes("a=b", "ns", "http://localhost:41234", 8080).api())
                .isEqualTo("http://localhost:41234");
        assertThat(new AgentProperties.Kubernetes("a=b", "ns", "https://10.0.0.1:6443/prefix", 8080).port())
                .isEqualTo(8080);
    }
}
