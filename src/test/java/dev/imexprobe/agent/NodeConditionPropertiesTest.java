package dev.imexprobe.agent;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeConditionPropertiesTest {

    static NodeConditionProperties props(int rounds, Duration heartbeat, int ordinal) {
        return new NodeConditionProperties(true, rounds, heartbeat, null, null, 5, Duration.ofMinutes(1), ordinal,
                true);
    }

    @Test
    void onlyTheChosenOrdinalWritesInPerGpuMode() {
        assertThat(props(2, Duration.ofMinutes(5), -1).writesFrom("anything")).isTrue();
        assertThat(props(2, Duration.ofMinutes(5), 0).writesFrom("imexprobe-gb200-01-0")).isTrue();
        assertThat(props(2, Duration.ofMinutes(5), 0).writesFrom("imexprobe-gb200-01-1")).isFalse();
        assertThat(props(2, Duration.ofMinutes(5), 0).writesFrom("imexprobe-gb200-01-10")).as("ordinal 10").isFalse();
        assertThat(props(2, Duration.ofMinutes(5), 1).writesFrom("imexprobe-gb200-01-11")).as("ordinal 11").isFalse();
        assertThat(props(2, Duration.ofMinutes(5), 0).writesFrom(null)).isFalse();
    }

    @Test
    void badValuesNameTheProperty() {
        assertThatThrownBy(() -> props(0, Duration.ofMinutes(5), -1)).hasMessageContaining("node-condition.rounds");
        assertThatThrownBy(() -> props(2, Duration.ofMillis(10), -1)).hasMessageContaining("heartbeat");
        assertThatThrownBy(() -> props(2, Duration.ofMinutes(5), -2)).hasMessageContaining("ordinal");
        assertThatThrownBy(() -> new KubernetesProperties("ftp://x", null, null, null, 1, null))
                .hasMessageContaining("imexprobe.kubernetes.api");
    }

    @Test
    void kubernetesSettingsDefaultToInClusterAndTheOlderPeersApiIsStillRead() {
        KubernetesProperties none = new KubernetesProperties(null, null, null, null, 1, null);
        assertThat(none.settings(null).apiServer().toString()).isEqualTo("https://kubernetes.default.svc");
        assertThat(none.settings(null).tokenFile())
                .isEqualTo(Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token"));
        assertThat(none.settings("http://localhost:1").apiServer().toString()).isEqualTo("http://localhost:1");
        KubernetesProperties set = new KubernetesProperties("http://api:8001", "/t", "/ca.pem", Duration.ofSeconds(2),
                3, Duration.ofMillis(100));
        assertThat(set.settings("http://ignored:1").apiServer().toString()).isEqualTo("http://api:8001");
        assertThat(set.settings(null).tokenFile()).isEqualTo(Path.of("/t"));
        assertThat(set.settings(null).caFile()).isEqualTo(Path.of("/ca.pem"));
        assertThat(set.settings(null).retries()).isEqualTo(3);
    }
}
