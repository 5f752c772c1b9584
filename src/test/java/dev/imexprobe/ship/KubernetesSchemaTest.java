package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The schema check itself must catch what it is there for, or the chart tests prove nothing. */
class KubernetesSchemaTest {

    static Map<String, Object> daemonSet(Map<String, Object> securityContext) {
        return Map.of("apiVersion", "apps/v1", "kind", "DaemonSet",
                "metadata", Map.of("name", "x", "namespace", "imexprobe"),
                "spec", Map.of("selector", Map.of("matchLabels", Map.of("a", "b")),
                        "template", Map.of("metadata", Map.of("labels", Map.of("a", "b")),
                                "spec", Map.of("containers", List.of(Map.of("name", "agent", "image", "i",
                                        "securityContext", securityContext))))));
    }

    @Test
    void acceptsKnownFields() {
        assertThat(KubernetesSchema.load(daemonSet(Map.of("readOnlyRootFilesystem", true))))
                .isInstanceOf(io.fabric8.kubernetes.api.model.apps.DaemonSet.class);
    }

    @Test
    void rejectsAMisspeltFieldDeepInsideAPodTemplate() {
        assertThatThrownBy(() -> KubernetesSchema.load(daemonSet(Map.of("readOnlyRootFileSystem", true))))
                .hasMessageContaining("readOnlyRootFileSystem").hasMessageContaining("SecurityContext");
    }

    @Test
    void rejectsAnUnknownKind() {
        assertThatThrownBy(() -> KubernetesSchema.load(Map.of("apiVersion", "v1", "kind", "Pdo",
                "metadata", Map.of("name", "x")))).hasMessageContaining("no schema for v1/Pdo");
    }
}
