package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

/**
 * Checks for the custom resources we render, whose schemas (CRDs of the Prometheus operator and of the NVIDIA DRA
 * driver) are not part of the Kubernetes model: the fields those CRDs require, and no field they do not define.
 */
final class CustomResources {

    private static final String DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    private static final String PROM_DURATION = "([0-9]+(ms|s|m|h|d|w|y))+";

    private CustomResources() {
    }

    static void check(Map<String, Object> doc) {
        known(doc, "apiVersion", "kind", "metadata", "spec");
        assertThat(Chart.<String>at(doc, "metadata.name")).matches(DNS_LABEL);
        switch (KubernetesSchema.typeKey(doc)) {
            case "monitoring.coreos.com/v1/ServiceMonitor" -> serviceMonitor(doc);
            case "monitoring.coreos.com/v1/PrometheusRule" -> prometheusRule(doc);
            case "resource.nvidia.com/v1beta1/ComputeDomain" -> computeDomain(doc);
            default -> throw new AssertionError("no check for " + KubernetesSchema.typeKey(doc));
        }
    }

    static void serviceMonitor(Map<String, Object> doc) {
        Map<String, Object> spec = Chart.at(doc, "spec");
        assertThat(spec).containsKeys("selector", "endpoints");
        known(spec, "selector", "namespaceSelector", "endpoints");
        assertThat(Chart.<Map<String, String>>at(spec, "selector.matchLabels")).isNotEmpty();
        List<Map<String, Object>> endpoints = Chart.at(spec, "endpoints");
        assertThat(endpoints).isNotEmpty().allSatisfy(e -> {
            assertThat(e).containsKeys("port", "path");
            known(e, "port", "path", "scheme", "interval", "scrapeTimeout", "honorLabels", "relabelings", "metricRelabelings");
            assertThat((String) e.get("interval")).matches(PROM_DURATION);
            assertThat((String) e.get("scrapeTimeout")).matches(PROM_DURATION);
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> relabelings = (List<Map<String, Object>>) e.get("relabelings");
            assertThat(relabelings).allSatisfy(r -> {
                known(r, "action", "sourceLabels", "targetLabel");
                assertThat((String) r.get("action")).isIn("replace", "keep", "drop", "labelmap");
            });
        });
    }

    static void prometheusRule(Map<String, Object> doc) {
        List<Map<String, Object>> groups = Chart.at(doc, "spec.groups");
        known(Chart.at(doc, "spec"), "groups");
        assertThat(groups).isNotEmpty().allSatisfy(g -> {
            known(g, "name", "rules");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> rules = (List<Map<String, Object>>) g.get("rules");
            assertThat(rules).isNotEmpty().allSatisfy(r -> {
                assertThat(r).containsKeys("alert", "expr");
                known(r, "alert", "expr", "for", "labels", "annotations");
                assertThat((String) r.get("expr")).isNotBlank();
                assertThat((String) r.get("for")).matches(PROM_DURATION);
                assertThat(Chart.<String>at(r, "labels.severity")).isIn("critical", "warning", "info");
                assertThat(Chart.<Map<String, String>>at(r, "annotations")).containsKeys("summary", "description");
            });
        });
    }

    static void computeDomain(Map<String, Object> doc) {
        Map<String, Object> spec = Chart.at(doc, "spec");
        assertThat(spec).containsKey("channel");
        known(spec, "numNodes", "channel");
        assertThat((Integer) spec.get("numNodes")).isNotNegative();
        known(Chart.at(spec, "channel"), "resourceClaimTemplate", "allocationMode");
        known(Chart.at(spec, "channel.resourceClaimTemplate"), "name");
        assertThat(Chart.<String>at(spec, "channel.resourceClaimTemplate.name")).matches(DNS_LABEL);
    }

    /** Every key is one the CRD defines (optional ones may be absent). */
    private static void known(Map<String, ?> map, String... allowed) {
        assertThat(map.keySet()).as("fields of %s", map).isSubsetOf(allowed);
    }
}
