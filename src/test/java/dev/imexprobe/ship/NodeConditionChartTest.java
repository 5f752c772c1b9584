package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;

import dev.imexprobe.ship.Chart.Rendered;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The chart's Node condition: on by default; RBAC, env, token and API egress only when on. */
class NodeConditionChartTest {

    static final List<String> NODES = List.of("gb200-01", "gb200-02");

    @Test
    void onByDefaultWithPatchOnNodeStatusAndCreateOnEventsOnly() {
        Rendered r = Chart.render(values());
        ClusterRole role = (ClusterRole) KubernetesSchema.load(r.one("ClusterRole"));
        assertThat(role.getMetadata().getName()).isEqualTo("imexprobe-node-condition");
        assertThat(role.getRules()).hasSize(2);
        assertThat(role.getRules().get(0).getResources()).containsExactly("nodes");
        assertThat(role.getRules().get(0).getVerbs()).containsExactly("get");
        assertThat(role.getRules().get(1).getResources()).containsExactly("nodes/status");
        assertThat(role.getRules().get(1).getVerbs()).containsExactly("patch");
        assertThat(role.getRules()).allSatisfy(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getResourceNames()).as("a DaemonSet may land on any node").isNullOrEmpty();
        });
        ClusterRoleBinding binding = (ClusterRoleBinding) KubernetesSchema.load(r.one("ClusterRoleBinding"));
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getName()).isEqualTo("imexprobe");
            assertThat(s.getNamespace()).isEqualTo(Chart.NAMESPACE);
        });

        Role events = (Role) KubernetesSchema.load(r.one("Role"));
        assertThat(events.getMetadata().getNamespace()).isEqualTo("default");
        assertThat(events.getRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("events.k8s.io");
            assertThat(rule.getResources()).containsExactly("events");
            assertThat(rule.getVerbs()).containsExactly("create");
        });
        RoleBinding eventsBinding = (RoleBinding) KubernetesSchema.load(r.one("RoleBinding"));
        assertThat(eventsBinding.getMetadata().getNamespace()).isEqualTo("default");
        assertThat(eventsBinding.getSubjects().getFirst().getNamespace()).isEqualTo(Chart.NAMESPACE);

        PodTemplateSpec pod = HelmChartTest.podTemplates(r).getFirst();
        Map<String, EnvVar> env = HelmChartTest.env(pod.getSpec().getContainers().getFirst());
        assertThat(env.get("IMEXPROBE_NODECONDITION_ENABLED").getValue()).isEqualTo("true");
        assertThat(env.get("IMEXPROBE_NODECONDITION_ROUNDS").getValue()).isEqualTo("2");
        assertThat(env.get("IMEXPROBE_NODECONDITION_HEARTBEAT").getValue()).isEqualTo("5m");
        assertThat(env.get("IMEXPROBE_NODECONDITION_EVENTNAMESPACE").getValue()).isEqualTo("default");
        assertThat(env).doesNotContainKey("IMEXPROBE_NODECONDITION_ORDINAL");
        // The default channel mode is observer: no channel by configuration, so Unknown, not False.
        assertThat(env.get("IMEXPROBE_NODECONDITION_CHANNELEXPECTED").getValue()).isEqualTo("false");
        assertThat(HelmChartTest.env(HelmChartTest.podTemplates(Chart.render(values("imex.channel.mode", "hostPath")))
                .getFirst().getSpec().getContainers().getFirst())).doesNotContainKey("IMEXPROBE_NODECONDITION_CHANNELEXPECTED");
        assertThat(env.get("IMEXPROBE_NODE_NAME").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
        assertThat(pod.getSpec().getAutomountServiceAccountToken()).isTrue();

        NetworkPolicy np = (NetworkPolicy) KubernetesSchema.load(r.one("NetworkPolicy"));
        assertThat(np.getSpec().getEgress()).hasSize(3);
        assertThat(np.getSpec().getEgress().get(2).getPorts()).extracting(p -> p.getPort().getIntVal())
                .containsExactly(443, 6443);
    }

    @Test
    void offRendersNoRbacNoEnvNoTokenAndNoWayToTheApi() {
        Rendered r = Chart.render(values("nodeCondition.enabled", false));
        assertThat(r.ofKind("ClusterRole")).isEmpty();
        assertThat(r.ofKind("ClusterRoleBinding")).isEmpty();
        assertThat(r.ofKind("Role")).isEmpty();
        assertThat(r.ofKind("RoleBinding")).isEmpty();
        PodTemplateSpec pod = HelmChartTest.podTemplates(r).getFirst();
        assertThat(HelmChartTest.env(pod.getSpec().getContainers().getFirst()).keySet())
                .noneMatch(k -> k.startsWith("IMEXPROBE_NODECONDITION_"));
        assertThat(pod.getSpec().getAutomountServiceAccountToken()).isFalse();
        NetworkPolicy np = (NetworkPolicy) KubernetesSchema.load(r.one("NetworkPolicy"));
        assertThat(np.getSpec().getEgress()).hasSize(2);
    }

    @Test
    void noChannelByConfigurationIsToldToTheAgent() {
        Rendered r = Chart.render(values("imex.channel.mode", "observer"));
        Map<String, EnvVar> env = HelmChartTest.env(HelmChartTest.podTemplates(r).getFirst().getSpec().getContainers()
                .getFirst());
        assertThat(env.get("IMEXPROBE_NODECONDITION_CHANNELEXPECTED").getValue()).isEqualTo("false");
    }

    @Test
    void perGpuNamesTheListedNodesAndLetsOnlyPodZeroWrite() {
        Rendered r = Chart.render(values("mode", "perGpu", "perGpu.nodes", NODES, "nodeCondition.rounds", 3,
                "nodeCondition.eventNamespace", "gpu-events"));
        ClusterRole role = (ClusterRole) KubernetesSchema.load(r.one("ClusterRole"));
        assertThat(role.getRules()).allSatisfy(rule -> assertThat(rule.getResourceNames())
                .containsExactlyElementsOf(NODES));
        assertThat(((Role) KubernetesSchema.load(r.one("Role"))).getMetadata().getNamespace()).isEqualTo("gpu-events");
        List<PodTemplateSpec> pods = HelmChartTest.podTemplates(r);
        assertThat(pods).hasSize(2);
        for (PodTemplateSpec pod : pods) {
            Map<String, EnvVar> env = HelmChartTest.env(pod.getSpec().getContainers().getFirst());
            assertThat(env.get("IMEXPROBE_NODECONDITION_ORDINAL").getValue()).isEqualTo("0");
            assertThat(env.get("IMEXPROBE_NODECONDITION_ROUNDS").getValue()).isEqualTo("3");
            assertThat(env.get("IMEXPROBE_NODECONDITION_EVENTNAMESPACE").getValue()).isEqualTo("gpu-events");
        }
    }
}
