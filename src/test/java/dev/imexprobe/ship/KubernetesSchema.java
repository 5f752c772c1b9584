package dev.imexprobe.ship;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Loads each rendered document into fabric8's typed Kubernetes model (the API's schema as Java classes) and fails
 * on any field the schema does not know. fabric8 keeps unknown fields in additionalProperties instead of refusing
 * them, so every model object reached is checked for leftovers: a misspelt readOnlyRootFileSystem fails here.
 */
final class KubernetesSchema {

    private static final Map<String, Class<?>> TYPES = Map.ofEntries(
            Map.entry("v1/ServiceAccount", ServiceAccount.class),
            Map.entry("v1/Secret", Secret.class),
            Map.entry("v1/Service", Service.class),
            Map.entry("v1/ConfigMap", ConfigMap.class),
            Map.entry("apps/v1/DaemonSet", DaemonSet.class),
            Map.entry("apps/v1/StatefulSet", StatefulSet.class),
            Map.entry("batch/v1/Job", Job.class),
            Map.entry("rbac.authorization.k8s.io/v1/Role", Role.class),
            Map.entry("rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRole", io.fabric8.kubernetes.api.model.rbac.ClusterRole.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRoleBinding",
                    io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding.class),
            Map.entry("networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class),
            Map.entry("resource.k8s.io/v1/ResourceClaim", ResourceClaim.class),
            Map.entry("resource.k8s.io/v1/ResourceClaimTemplate", ResourceClaimTemplate.class));

    /** Custom resources we render; checked by CustomResources, not by a Kubernetes schema. */
    static final List<String> CUSTOM = List.of(
            "monitoring.coreos.com/v1/ServiceMonitor",
            "monitoring.coreos.com/v1/PrometheusRule",
            "resource.nvidia.com/v1beta1/ComputeDomain");

    private KubernetesSchema() {
    }

    static String typeKey(Map<String, Object> doc) {
        return doc.get("apiVersion") + "/" + doc.get("kind");
    }

    /** The typed object, or an AssertionError naming the document and every unknown field. */
    static Object load(Map<String, Object> doc) {
        String key = typeKey(doc);
        Class<?> type = TYPES.get(key);
        if (type == null) {
            throw new AssertionError("no schema for " + key + " (known: " + TYPES.keySet() + ", custom: " + CUSTOM + ")");
        }
        String json = Serialization.asJson(doc);
        Object typed = Serialization.unmarshal(json, type);
        List<String> unknown = new ArrayList<>();
        walk(typed, key + " " + Chart.<String>at(doc, "metadata.name"), unknown);
        if (!unknown.isEmpty()) {
            throw new AssertionError("fields the Kubernetes schema does not know: " + unknown);
        }
        return typed;
    }

    private static void walk(Object node, String path, List<String> unknown) {
        if (node == null) {
            return;
        }
        if (node instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                walk(list.get(i), path + "[" + i + "]", unknown);
            }
            return;
        }
        if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> walk(v, path + "." + k, unknown));
            return;
        }
        Class<?> type = node.getClass();
        // Opaque driver parameters are free-form by design (RawExtension); the model keeps them generic.
        if (!type.getName().startsWith("io.fabric8.kubernetes.api.model") || node instanceof GenericKubernetesResource) {
            return;
        }
        for (Method m : type.getMethods()) {
            if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            Object value;
            try {
                value = m.invoke(node);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue;
            }
            if (m.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    unknown.add(path + " " + type.getSimpleName() + " " + extra.keySet());
                }
                continue;
            }
            walk(value, path + "." + decapitalize(m.getName().substring(3)), unknown);
        }
    }

    private static String decapitalize(String s) {
        return s.isEmpty() ? s : Character.toLowerCase(s.charAt(0)) + s.substring(1);
    }
}
