package dev.imexprobe.peer;

import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Pods and PodLists as the Kubernetes API serves them, trimmed to what discovery reads plus some noise. */
final class PodFixtures {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** A pod; {@code httpPort} 0 means no container port named "http". */
    record Pod(String name, String node, String ip, String phase, String ready, boolean terminating, int httpPort) {

        static Pod runningReady(String name, String node, String ip) {
            return new Pod(name, node, ip, "Running", "True", false, 0);
        }

        Pod phase(String newPhase) {
            return new Pod(name, node, ip, newPhase, ready, terminating, httpPort);
        }

        Pod ready(String newReady) {
            return new Pod(name, node, ip, phase, newReady, terminating, httpPort);
        }

        Pod beingDeleted() {
            return new Pod(name, node, ip, phase, ready, true, httpPort);
        }

        Pod withoutIp() {
            return new Pod(name, node, null, phase, ready, terminating, httpPort);
        }

        Pod httpPort(int port) {
            return new Pod(name, node, ip, phase, ready, terminating, port);
        }

        boolean isPeer() {
            return "Running".equals(phase) && "True".equals(ready) && !terminating && ip != null;
        }

        Map<String, Object> toJson() {
            Map<String, Object> metadata = new LinkedHashMap<>();
            metadata.put("name", name);
            metadata.put("namespace", "gpu-ops");
            metadata.put("uid", "uid-" + name);
            metadata.put("labels", Map.of("app.kubernetes.io/name", "imexprobe"));
            if (terminating) {
                metadata.put("deletionTimestamp", "2026-01-01T00:00:00Z");
                metadata.put("deletionGracePeriodSeconds", 30);
            }
            List<Map<String, Object>> ports = new ArrayList<>();
            ports.add(Map.of("name", "metrics-x", "containerPort", 9999, "protocol", "TCP"));
            if (httpPort > 0) {
                ports.add(Map.of("name", "http", "containerPort", httpPort, "protocol", "TCP"));
            }
            Map<String, Object> spec = new LinkedHashMap<>();
            if (node != null) {
                spec.put("nodeName", node);
            }
            spec.put("containers", List.of(
                    Map.of("name", "sidecar", "image", "busybox"),
                    Map.of("name", "agent", "image", "imexprobe:dev", "ports", ports)));
            Map<String, Object> status = new LinkedHashMap<>();
            status.put("phase", phase);
            List<Map<String, Object>> conditions = new ArrayList<>();
            conditions.add(Map.of("type", "PodScheduled", "status", "True"));
            if (ready != null) {
                conditions.add(Map.of("type", "Ready", "status", ready));
            }
            conditions.add(Map.of("type", "ContainersReady", "status", ready == null ? "False" : ready));
            status.put("conditions", conditions);
            if (ip != null) {
                status.put("podIP", ip);
                status.put("podIPs", List.of(Map.of("ip", ip)));
            }
            status.put("hostIP", "192.0.2.1");
            Map<String, Object> pod = new LinkedHashMap<>();
            pod.put("kind", "Pod");
            pod.put("apiVersion", "v1");
            pod.put("metadata", metadata);
            pod.put("spec", spec);
            pod.put("status", status);
            return pod;
        }
    }

    static String podList(List<Pod> pods, String continueToken) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("resourceVersion", "12345");
        if (continueToken != null) {
            metadata.put("continue", continueToken);
            metadata.put("remainingItemCount", 3);
        }
        Map<String, Object> list = new LinkedHashMap<>();
        list.put("kind", "PodList");
        list.put("apiVersion", "v1");
        list.put("metadata", metadata);
        list.put("items", pods.stream().map(Pod::toJson).toList());
        return JSON.writeValueAsString(list);
    }

    static String status(int code, String reason, String message) {
        return JSON.writeValueAsString(Map.of("kind", "Status", "apiVersion", "v1", "status", "Failure",
                "reason", reason, "message", message, "code", code));
    }

    private PodFixtures() {
    }
}
