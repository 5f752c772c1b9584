package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.at;
import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.imexprobe.ship.Chart.Rendered;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The keys operators know from dcgm-exporter's, blackbox-exporter's and node-exporter's charts: each one rendered
 * where an operator expects it, and each one refused by the strict schema when its type is wrong.
 */
class OperatorValuesTest {

    private static final List<String> ALERTS = List.of("ImexprobePairImportFailing", "ImexprobePairImportIntermittent",
            "ImexprobeTargetUnreachable", "ImexprobeDomainFailing",
            "ImexprobeAgentDown", "ImexprobeProbesStale", "ImexprobeNoImexChannel", "ImexprobeDriverCallStuck",
            "ImexprobeFabricUnhealthy");

    private static Map<String, Object> agent(Rendered r) {
        return at(r.one("DaemonSet"), "spec.template.spec.containers.0");
    }

    private static void schemaRefuses(Map<String, Object> values, String key) {
        assertThatThrownBy(() -> Chart.render(values))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining(key);
    }

    @Test
    void serviceMonitorRelabelings() {
        List<Map<String, Object>> extra = List.of(Map.of("action", "replace", "targetLabel", "cluster",
                "replacement", "gb200-west"));
        Map<String, Object> sm = Chart.render(values("serviceMonitor.enabled", true,
                "serviceMonitor.relabelings", extra)).one("ServiceMonitor");
        List<Map<String, Object>> relabelings = at(sm, "spec.endpoints.0.relabelings");
        // The chart's own node and pod labels first, the operator's after them.
        assertThat(relabelings).extracting(m -> m.get("targetLabel")).containsExactly("node", "pod", "cluster");
        schemaRefuses(values("serviceMonitor.relabelings", "cluster=x"), "relabelings");
    }

    @Test
    void serviceMonitorMetricRelabelings() {
        List<Map<String, Object>> drop = List.of(Map.of("action", "drop", "sourceLabels", List.of("__name__"),
                "regex", "jvm_.*"));
        Map<String, Object> sm = Chart.render(values("serviceMonitor.enabled", true,
                "serviceMonitor.metricRelabelings", drop)).one("ServiceMonitor");
        assertThat(Chart.<Object>at(sm, "spec.endpoints.0.metricRelabelings")).isEqualTo(drop);
        Map<String, Object> plain = Chart.render(values("serviceMonitor.enabled", true)).one("ServiceMonitor");
        assertThat(Chart.<Map<String, Object>>at(plain, "spec.endpoints.0")).doesNotContainKey("metricRelabelings");
        schemaRefuses(values("serviceMonitor.metricRelabelings", Map.of("a", "b")), "metricRelabelings");
    }

    @Test
    void serviceMonitorHonorLabels() {
        assertThat(Chart.<Boolean>at(Chart.render(values("serviceMonitor.enabled", true)).one("ServiceMonitor"),
                "spec.endpoints.0.honorLabels")).isFalse();
        assertThat(Chart.<Boolean>at(Chart.render(values("serviceMonitor.enabled", true,
                "serviceMonitor.honorLabels", true)).one("ServiceMonitor"), "spec.endpoints.0.honorLabels")).isTrue();
        schemaRefuses(values("serviceMonitor.honorLabels", "yes"), "honorLabels");
    }

    @Test
    void serviceMonitorNamespace() {
        Map<String, Object> sm = Chart.render(values("serviceMonitor.enabled", true,
                "serviceMonitor.namespace", "monitoring")).one("ServiceMonitor");
        assertThat(Chart.<String>at(sm, "metadata.namespace")).isEqualTo("monitoring");
        // It still selects the agents' Service where that lives.
        assertThat(Chart.<List<String>>at(sm, "spec.namespaceSelector.matchNames")).containsExactly(Chart.NAMESPACE);
        schemaRefuses(values("serviceMonitor.namespace", 7), "namespace");
    }

    @Test
    void prometheusRuleAdditionalLabels() {
        Map<String, Object> rule = Chart.render(values("imex.channel.mode", "hostPath", "prometheusRule.enabled", true,
                "prometheusRule.additionalLabels", Map.of("team", "gpu-infra"))).one("PrometheusRule");
        List<Map<String, Object>> rules = at(rule, "spec.groups.0.rules");
        assertThat(rules).hasSize(ALERTS.size()).allSatisfy(r -> {
            assertThat(Chart.<Map<String, Object>>at(r, "labels")).containsEntry("team", "gpu-infra")
                    .containsKey("severity");
        });
        schemaRefuses(values("prometheusRule.additionalLabels", Map.of("team", 1)), "additionalLabels");
    }

    @Test
    void prometheusRuleDisabledDropsExactlyThatAlert() {
        Map<String, Object> rule = Chart.render(values("imex.channel.mode", "hostPath", "prometheusRule.enabled", true,
                "prometheusRule.disabled.ImexprobeTargetUnreachable", true,
                "prometheusRule.disabled.ImexprobeAgentDown", false)).one("PrometheusRule");
        List<Map<String, Object>> rules = at(rule, "spec.groups.0.rules");
        assertThat(rules).extracting(r -> r.get("alert"))
                .containsExactlyElementsOf(ALERTS.stream().filter(a -> !a.equals("ImexprobeTargetUnreachable")).toList());
        // A misspelt alert name is an error, not a switch that silently does nothing.
        schemaRefuses(values("prometheusRule.disabled.ImexprobeTargetUnreachabel", true), "ImexprobeTargetUnreachabel");
    }

    @Test
    void prometheusRuleDisabledKnowsEveryAlert() {
        // The schema lists the switches by name: an alert added to the rules but not to the schema cannot be dropped.
        for (String alert : ALERTS) {
            Map<String, Object> rule = Chart.render(values("imex.channel.mode", "hostPath", "prometheusRule.enabled", true,
                    "prometheusRule.disabled." + alert, true)).one("PrometheusRule");
            List<Map<String, Object>> rules = at(rule, "spec.groups.0.rules");
            assertThat(rules).as("disabled.%s", alert).extracting(r -> r.get("alert"))
                    .containsExactlyElementsOf(ALERTS.stream().filter(a -> !a.equals(alert)).toList());
        }
    }

    @Test
    void prometheusRuleExtraRules() {
        Map<String, Object> extra = Map.of("alert", "GpuTeamImexprobeDown", "expr", "absent(up{job=\"imexprobe\"})",
                "for", "5m", "labels", Map.of("severity", "critical"));
        Map<String, Object> rule = Chart.render(values("imex.channel.mode", "hostPath", "prometheusRule.enabled", true,
                "prometheusRule.extraRules", List.of(extra))).one("PrometheusRule");
        List<Map<String, Object>> groups = at(rule, "spec.groups");
        assertThat(groups).extracting(g -> g.get("name")).containsExactly("imexprobe", "imexprobe.extra");
        assertThat(Chart.<List<Object>>at(groups.get(1), "rules")).containsExactly(extra);
        schemaRefuses(values("prometheusRule.extraRules", List.of(Map.of("alert", "NoExpr"))), "extraRules");
    }

    @Test
    void runbookBaseUrlEmptyByDefaultDropsTheUrlAndASetBaseLinksEachAlert() {
        List<Map<String, Object>> rules = at(Chart.render(values("imex.channel.mode", "hostPath", "prometheusRule.enabled", true)).one("PrometheusRule"),
                "spec.groups.0.rules");
        assertThat(rules).allSatisfy(r -> assertThat(Chart.<Map<String, Object>>at(r, "annotations"))
                .doesNotContainKey("runbook_url").containsKeys("summary", "description"));
        List<Map<String, Object>> linked = at(Chart.render(values("imex.channel.mode", "hostPath", "prometheusRule.enabled", true,
                "alerts.runbookBaseUrl", "https://wiki.example.com/imexprobe")).one("PrometheusRule"), "spec.groups.0.rules");
        assertThat(linked).allSatisfy(r -> assertThat(Chart.<String>at(r, "annotations.runbook_url"))
                .isEqualTo("https://wiki.example.com/imexprobe#" + ((String) r.get("alert")).toLowerCase()));
        schemaRefuses(values("alerts.runbookBaseUrl", "wiki/imexprobe"), "runbookBaseUrl");
    }

    @Test
    void observersGetNoNoImexChannelAlert() {
        List<Map<String, Object>> rules = at(Chart.render(values("prometheusRule.enabled", true)).one("PrometheusRule"),
                "spec.groups.0.rules");
        assertThat(rules).extracting(r -> r.get("alert"))
                .containsExactlyElementsOf(ALERTS.stream().filter(a -> !a.equals("ImexprobeNoImexChannel")).toList());
    }

    @Test
    void meshSubsetReachesTheAgent() {
        int k = 1 + new java.util.Random().nextInt(64);
        assertThat(Chart.<List<Map<String, Object>>>at(agent(Chart.render(values("agent.meshSubset", k))), "env"))
                .filteredOn(e -> "IMEXPROBE_MESH_SUBSET".equals(e.get("name"))).singleElement()
                .satisfies(e -> assertThat(e.get("value")).isEqualTo(Integer.toString(k)));
        schemaRefuses(values("agent.meshSubset", "16"), "meshSubset");
    }

    @Test
    void extraArgs() {
        Map<String, Object> c = agent(Chart.render(values("agent.extraArgs", List.of("--imexprobe.mesh.concurrency=8"))));
        assertThat(Chart.<List<String>>at(c, "args")).containsExactly("serve", "--imexprobe.mesh.concurrency=8");
        schemaRefuses(values("agent.extraArgs", "--x"), "extraArgs");
    }

    @Test
    void extraVolumesAndExtraVolumeMounts() {
        Map<String, Object> vol = Map.of("name", "ca", "configMap", Map.of("name", "corp-ca"));
        Map<String, Object> mount = Map.of("name", "ca", "mountPath", "/etc/corp-ca", "readOnly", true);
        Rendered r = Chart.render(values("extraVolumes", List.of(vol), "extraVolumeMounts", List.of(mount)));
        KubernetesSchema.load(r.one("DaemonSet"));
        assertThat(Chart.<List<Object>>at(r.one("DaemonSet"), "spec.template.spec.volumes")).contains(vol);
        assertThat(Chart.<List<Object>>at(agent(r), "volumeMounts")).contains(mount);
        schemaRefuses(values("extraVolumes", Map.of("name", "ca")), "extraVolumes");
        schemaRefuses(values("extraVolumeMounts", List.of(Map.of("name", "ca"))), "extraVolumeMounts");
    }

    @Test
    void serviceAccountCreateNameAnnotations() {
        Rendered own = Chart.render(values("serviceAccount.name", "imexprobe-agent",
                "serviceAccount.annotations", Map.of("iam.example.com/role", "none"), "peers.discovery", "kubernetes",
                "nodeCondition.enabled", false));
        assertThat(Chart.<String>at(own.one("ServiceAccount"), "metadata.name")).isEqualTo("imexprobe-agent");
        assertThat(Chart.<Map<String, Object>>at(own.one("ServiceAccount"), "metadata.annotations"))
                .containsEntry("iam.example.com/role", "none");
        assertThat(Chart.<String>at(own.one("DaemonSet"), "spec.template.spec.serviceAccountName")).isEqualTo("imexprobe-agent");
        assertThat(Chart.<String>at(own.one("RoleBinding"), "subjects.0.name")).isEqualTo("imexprobe-agent");

        Rendered existing = Chart.render(values("serviceAccount.create", false, "serviceAccount.name", "platform-sa"));
        assertThat(existing.ofKind("ServiceAccount")).isEmpty();
        assertThat(Chart.<String>at(existing.one("DaemonSet"), "spec.template.spec.serviceAccountName")).isEqualTo("platform-sa");
        schemaRefuses(values("serviceAccount.create", "no"), "create");
        schemaRefuses(values("serviceAccount.annotations", Map.of("a", 1)), "annotations");
    }

    @Test
    void commonLabelsOnEveryObjectAndThePods() {
        Rendered r = Chart.render(values("commonLabels", Map.of("cost-center", "gpu-infra"), "serviceMonitor.enabled", true,
                "prometheusRule.enabled", true, "dashboard.enabled", true, "peers.discovery", "kubernetes"));
        assertThat(r.documents()).allSatisfy(d -> assertThat(Chart.<Map<String, Object>>at(d, "metadata.labels"))
                .as("labels of %s", d.get("kind")).containsEntry("cost-center", "gpu-infra"));
        assertThat(Chart.<Map<String, Object>>at(r.one("DaemonSet"), "spec.template.metadata.labels"))
                .containsEntry("cost-center", "gpu-infra");
        // Never in the selector: changing commonLabels must not orphan the DaemonSet's pods.
        assertThat(Chart.<Map<String, Object>>at(r.one("DaemonSet"), "spec.selector.matchLabels"))
                .doesNotContainKey("cost-center");
        schemaRefuses(values("commonLabels", Map.of("a", List.of("b"))), "commonLabels");
    }

    @Test
    void namespaceOverride() {
        Rendered r = Chart.render(values("namespaceOverride", "gpu-monitoring", "serviceMonitor.enabled", true,
                "prometheusRule.enabled", true, "peers.discovery", "kubernetes", "nodeCondition.enabled", false));
        assertThat(r.documents()).allSatisfy(d -> assertThat(Chart.<String>at(d, "metadata.namespace"))
                .as("namespace of %s", d.get("kind")).isEqualTo("gpu-monitoring"));
        assertThat(Chart.<List<String>>at(r.one("ServiceMonitor"), "spec.namespaceSelector.matchNames"))
                .containsExactly("gpu-monitoring");
        Rendered dns = Chart.render(values("namespaceOverride", "gpu-monitoring"));
        assertThat(Chart.<List<Map<String, Object>>>at(agent(dns), "env"))
                .anySatisfy(e -> assertThat(e).containsEntry("name", "IMEXPROBE_PEERS_DNS")
                        .containsEntry("value", "imexprobe.gpu-monitoring.svc:8080"));
        schemaRefuses(values("namespaceOverride", 3), "namespaceOverride");
    }

    @Test
    void priorityClassNameDefaultsToSystemNodeCritical() {
        assertThat(Chart.<String>at(Chart.render(values()).one("DaemonSet"), "spec.template.spec.priorityClassName"))
                .isEqualTo("system-node-critical");
        assertThat(Chart.<Map<String, Object>>at(Chart.render(values("priorityClassName", "")).one("DaemonSet"),
                "spec.template.spec")).doesNotContainKey("priorityClassName");
    }

    @Test
    void javaToolOptionsAppendsToTheImageFlags() throws Exception {
        // The image's flags, as the Dockerfile sets them.
        Matcher m = Pattern.compile("ENV JAVA_TOOL_OPTIONS=\"([^\"]*)\"").matcher(Files.readString(Project.ROOT.resolve("Dockerfile")));
        assertThat(m.find()).isTrue();
        String image = m.group(1);
        assertThat(image).contains("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

        // Nothing set: the image's own JAVA_TOOL_OPTIONS applies untouched.
        assertThat(Chart.<List<Map<String, Object>>>at(agent(Chart.render(values())), "env"))
                .noneSatisfy(e -> assertThat(e.get("name")).isEqualTo("JAVA_TOOL_OPTIONS"));

        // Only -Xmx set: SerialGC and C1 stay, -Xmx comes last so it wins over anything before it.
        List<Map<String, Object>> env = at(agent(Chart.render(values("agent.javaToolOptions", "-Xmx256m"))), "env");
        assertThat(env).filteredOn(e -> "JAVA_TOOL_OPTIONS".equals(e.get("name"))).singleElement()
                .satisfies(e -> assertThat(e.get("value")).isEqualTo(image + " -Xmx256m"));
    }

    @Test
    void networkPolicyExpressesOtherScrapersAndNodeLocalDns() {
        // Alloy in namespace observability, and NodeLocal DNSCache on its link-local address.
        Map<String, Object> alloy = Map.of("namespaceSelector", Map.of("matchLabels",
                Map.of("kubernetes.io/metadata.name", "observability")), "podSelector",
                Map.of("matchLabels", Map.of("app.kubernetes.io/name", "alloy")));
        Map<String, Object> nodeLocal = Map.of("ipBlock", Map.of("cidr", "169.254.20.10/32"));
        Rendered r = Chart.render(values("networkPolicy.extraIngressFrom", List.of(alloy),
                "networkPolicy.dns.extraTo", List.of(nodeLocal)));
        Map<String, Object> np = r.one("NetworkPolicy");
        KubernetesSchema.load(np);
        assertThat(Chart.<List<Object>>at(np, "spec.ingress.0.from")).contains(alloy);
        List<Map<String, Object>> egress = at(np, "spec.egress");
        assertThat(egress).filteredOn(e -> String.valueOf(e.get("ports")).contains("53")).singleElement()
                .satisfies(e -> assertThat(Chart.<List<Object>>at(e, "to")).contains(nodeLocal));
        schemaRefuses(values("networkPolicy.dns.extraTo", "169.254.20.10"), "extraTo");
    }
}
