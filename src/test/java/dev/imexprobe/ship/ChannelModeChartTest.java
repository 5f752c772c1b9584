package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.at;
import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.imexprobe.ship.Chart.Rendered;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Observe by default: the default install takes no ComputeDomain and needs no DRA driver; computeDomain is an
 * opt-in that a cluster without the driver's CRD refuses with a message.
 */
class ChannelModeChartTest {

    private static final String COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1/ComputeDomain";

    private static Map<String, String> env(Rendered r) {
        List<Map<String, Object>> env = at(r.one("DaemonSet"), "spec.template.spec.containers.0.env");
        return env.stream().filter(e -> e.get("value") != null)
                .collect(java.util.stream.Collectors.toMap(e -> (String) e.get("name"), e -> (String) e.get("value")));
    }

    @Test
    void defaultRendersNoComputeDomainWithOrWithoutTheCrd() {
        for (List<String> apis : List.of(List.<String>of(), List.of(COMPUTE_DOMAIN_API))) {
            Rendered r = Chart.render(values("apiVersions", apis));
            assertThat(r.ofKind("ComputeDomain")).as("with APIs %s", apis).isEmpty();
            assertThat(r.ofKind("ResourceClaim")).isEmpty();
            Map<String, Object> pod = at(r.one("DaemonSet"), "spec.template.spec");
            assertThat(pod).doesNotContainKey("resourceClaims");
            assertThat(Chart.<Map<String, Object>>at(pod, "containers.0.resources")).doesNotContainKey("claims");
            assertThat(Chart.<List<Map<String, Object>>>at(pod, "volumes")).allSatisfy(v -> assertThat(v).doesNotContainKey("hostPath"));
            assertThat(env(r)).containsEntry("IMEXPROBE_CHANNEL_MODE", "observer");
        }
    }

    @Test
    void hostPathMountsTheHostsChannelsAndSaysSo() {
        Rendered r = Chart.render(values("imex.channel.mode", "hostPath", "apiVersions", List.of()));
        assertThat(r.ofKind("ComputeDomain")).isEmpty();
        assertThat(env(r)).containsEntry("IMEXPROBE_CHANNEL_MODE", "hostPath");
    }

    @Test
    void computeDomainRendersTheDomainWhenTheClusterServesIt() {
        Rendered r = Chart.render(values("imex.channel.mode", "computeDomain", "apiVersions", List.of(COMPUTE_DOMAIN_API)));
        assertThat(r.one("ComputeDomain")).isNotNull();
        assertThat(env(r)).containsEntry("IMEXPROBE_CHANNEL_MODE", "computeDomain");
        CustomResources.check(r.one("ComputeDomain"));
    }

    @Test
    void computeDomainWithoutTheCrdFailsWithTheCauseAndTheWayOut() {
        assertThatThrownBy(() -> Chart.render(values("imex.channel.mode", "computeDomain", "apiVersions", List.of())))
                .hasMessageContaining("needs the NVIDIA DRA driver")
                .hasMessageContaining("resource.nvidia.com/v1beta1 ComputeDomain")
                .hasMessageContaining("imex.channel.mode=observer");
        assertThatThrownBy(() -> Chart.render(values("mode", "perGpu", "perGpu.nodes", List.of("n1"),
                "imex.channel.mode", "computeDomain", "apiVersions", List.of())))
                .hasMessageContaining("needs the NVIDIA DRA driver");
    }

    @Test
    void computeDomainStatusGrantsReadOnComputeDomainsOnlyWhenOn() {
        Rendered off = Chart.render(values());
        assertThat(off.ofKind("ClusterRole")).noneSatisfy(role -> assertThat(role.toString()).contains("computedomains"));
        assertThat(env(off)).doesNotContainKey("IMEXPROBE_COMPUTEDOMAINS_ENABLED");

        // On, with or without the CRD: a cluster without it answers 404, which the agent reports quietly.
        for (List<String> apis : List.of(List.<String>of(), List.of(COMPUTE_DOMAIN_API))) {
            Rendered on = Chart.render(values("computeDomainStatus.enabled", true, "apiVersions", apis));
            Map<String, Object> role = on.ofKind("ClusterRole").stream()
                    .filter(x -> Chart.<String>at(x, "metadata.name").endsWith("-computedomains")).findFirst()
                    .orElseThrow();
            assertThat(Chart.<List<Map<String, Object>>>at(role, "rules")).singleElement().satisfies(rule -> {
                assertThat(rule.get("apiGroups")).isEqualTo(List.of("resource.nvidia.com"));
                assertThat(rule.get("resources")).isEqualTo(List.of("computedomains"));
                assertThat(rule.get("verbs")).isEqualTo(List.of("get", "list"));
            });
            assertThat(on.ofKind("ClusterRoleBinding")).anySatisfy(b -> assertThat(Chart.<String>at(b,
                    "roleRef.name")).endsWith("-computedomains"));
            assertThat(env(on)).containsEntry("IMEXPROBE_COMPUTEDOMAINS_ENABLED", "true")
                    .containsEntry("IMEXPROBE_COMPUTEDOMAINS_INTERVAL", "60s");
            assertThat(Chart.<Object>at(on.one("DaemonSet"), "spec.template.spec.automountServiceAccountToken"))
                    .isEqualTo(true);
        }
    }

    @Test
    void monitoringObjectsWithoutTheOperatorsCrdsFailWithAMessage() {
        assertThatThrownBy(() -> Chart.render(values("serviceMonitor.enabled", true, "apiVersions", List.of())))
                .hasMessageContaining("ServiceMonitor CRD");
        assertThatThrownBy(() -> Chart.render(values("prometheusRule.enabled", true, "apiVersions", List.of())))
                .hasMessageContaining("PrometheusRule CRD");
    }
}
