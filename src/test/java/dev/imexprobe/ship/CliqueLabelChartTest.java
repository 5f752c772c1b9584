package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;

import dev.imexprobe.ship.Chart.Rendered;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The agent reads its Node's nvidia.com/gpu.clique label where it may already get Nodes (the node condition's
 * ClusterRole), and only when asked adds a read-only ClusterRole of its own.
 */
class CliqueLabelChartTest {

    static Map<String, EnvVar> env(Rendered r) {
        PodTemplateSpec pod = HelmChartTest.podTemplates(r).getFirst();
        return HelmChartTest.env(pod.getSpec().getContainers().getFirst());
    }

    @Test
    void byDefaultItRidesOnTheNodeConditionsGetAndAddsNoRole() {
        Rendered r = Chart.render(values());

        assertThat(env(r).get("IMEXPROBE_CLIQUELABEL_ENABLED").getValue()).isEqualTo("true");
        assertThat(env(r).get("IMEXPROBE_CLIQUELABEL_INTERVAL").getValue()).isEqualTo("60s");
        ClusterRole role = (ClusterRole) KubernetesSchema.load(r.one("ClusterRole"));
        assertThat(role.getMetadata().getName()).isEqualTo("imexprobe-node-condition");
        assertThat(role.getRules()).anySatisfy(rule -> {
            assertThat(rule.getResources()).containsExactly("nodes");
            assertThat(rule.getVerbs()).containsExactly("get");
        });
    }

    @Test
    void withoutTheNodeConditionItIsOffUnlessAskedThenItGetsNodesOnly() {
        Rendered off = Chart.render(values("nodeCondition.enabled", false));
        assertThat(env(off)).doesNotContainKey("IMEXPROBE_CLIQUELABEL_ENABLED");
        assertThat(off.ofKind("ClusterRole")).isEmpty();

        Rendered on = Chart.render(values("nodeCondition.enabled", false, "cliqueLabel.enabled", true,
                "cliqueLabel.interval", "5m"));
        assertThat(env(on).get("IMEXPROBE_CLIQUELABEL_ENABLED").getValue()).isEqualTo("true");
        assertThat(env(on).get("IMEXPROBE_CLIQUELABEL_INTERVAL").getValue()).isEqualTo("5m");
        ClusterRole role = (ClusterRole) KubernetesSchema.load(on.one("ClusterRole"));
        assertThat(role.getMetadata().getName()).isEqualTo("imexprobe-clique-label");
        assertThat(role.getRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getResources()).containsExactly("nodes");
            assertThat(rule.getVerbs()).containsExactly("get");
            assertThat(rule.getResourceNames()).isNullOrEmpty();
        });
        ClusterRoleBinding binding = (ClusterRoleBinding) KubernetesSchema.load(on.one("ClusterRoleBinding"));
        assertThat(binding.getRoleRef().getName()).isEqualTo("imexprobe-clique-label");
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getName()).isEqualTo("imexprobe");
            assertThat(s.getNamespace()).isEqualTo(Chart.NAMESPACE);
        });
        assertThat(HelmChartTest.podTemplates(on).getFirst().getSpec().getAutomountServiceAccountToken()).isTrue();
        NetworkPolicy np = (NetworkPolicy) KubernetesSchema.load(on.one("NetworkPolicy"));
        assertThat(np.getSpec().getEgress()).as("agents, DNS and the API server").hasSize(3);
    }

    @Test
    void offKeepsTheNodeConditionAndPerGpuNamesItsNodes() {
        Rendered off = Chart.render(values("cliqueLabel.enabled", false));
        assertThat(env(off)).doesNotContainKey("IMEXPROBE_CLIQUELABEL_ENABLED")
                .containsKey("IMEXPROBE_NODECONDITION_ENABLED");

        Rendered perGpu = Chart.render(values("mode", "perGpu", "perGpu.nodes", List.of("gb200-01", "gb200-02"),
                "imex.channel.mode", "hostPath", "nodeCondition.enabled", false, "cliqueLabel.enabled", true));
        ClusterRole role = (ClusterRole) KubernetesSchema.load(perGpu.one("ClusterRole"));
        assertThat(role.getRules().getFirst().getResourceNames()).containsExactly("gb200-01", "gb200-02");
    }
}
