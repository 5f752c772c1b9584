package dev.imexprobe.ship;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Renders helm/imexprobe with real Helm (helm-java) and gives the documents as plain maps. Release "imexprobe" in
 * namespace "imexprobe", so names are predictable (fullname "imexprobe", job "imexprobe").
 */
final class Chart {

    static final String RELEASE = "imexprobe";
    static final String NAMESPACE = "imexprobe";
    /** The cluster version templates render for (helm template alone assumes v1.20, below Chart.yaml kubeVersion). */
    static final String KUBE_VERSION = "1.34.0";

    private Chart() {
    }

    /** Values as nested maps: values("mode", "perGpu", "perGpu.nodes", List.of("a")) with dotted keys. */
    static Map<String, Object> values(Object... keyValues) {
        Map<String, Object> root = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            String[] path = ((String) keyValues[i]).split("\\.");
            Map<String, Object> node = root;
            for (int j = 0; j < path.length - 1; j++) {
                @SuppressWarnings("unchecked")
                Map<String, Object> child = (Map<String, Object>) node.computeIfAbsent(path[j], k -> new LinkedHashMap<>());
                node = child;
            }
            node.put(path[path.length - 1], keyValues[i + 1]);
        }
        return root;
    }

    /**
     * The CRD-backed APIs a cluster with the NVIDIA DRA driver and the Prometheus Operator serves. helm-java's
     * template has no --api-versions, so tests say them through the chart's apiVersions value; a test that sets
     * apiVersions itself (even to an empty list) renders as for a cluster without them.
     */
    static final List<String> CLUSTER_APIS = List.of("resource.nvidia.com/v1beta1/ComputeDomain",
            "monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule");

    /** helm template with these values; throws IllegalStateException with Helm's message when Helm refuses. */
    static Rendered render(Map<String, Object> values) {
        if (!values.containsKey("apiVersions")) {
            values = new LinkedHashMap<>(values);
            values.put("apiVersions", CLUSTER_APIS);
        }
        try {
            Path file = Files.createTempFile("imexprobe-values", ".yaml");
            try {
                DumperOptions o = new DumperOptions();
                o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
                Files.writeString(file, new Yaml(o).dump(values));
                TemplateCommand t = new Helm(Project.CHART).template().withName(RELEASE).withNamespace(NAMESPACE)
                        .withKubeVersion(KUBE_VERSION)
                        .withValuesFile(file);
                return Rendered.parse(t.call());
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The rendered manifests of one helm template run. */
    record Rendered(String text, List<Map<String, Object>> documents) {

        static Rendered parse(String text) {
            LoaderOptions lo = new LoaderOptions();
            lo.setAllowDuplicateKeys(false);
            List<Map<String, Object>> docs = new ArrayList<>();
            for (Object doc : new Yaml(lo).loadAll(text)) {
                if (doc != null) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> map = (Map<String, Object>) doc;
                    docs.add(map);
                }
            }
            return new Rendered(text, List.copyOf(docs));
        }

        List<Map<String, Object>> ofKind(String kind) {
            return documents.stream().filter(d -> kind.equals(d.get("kind"))).toList();
        }

        Map<String, Object> one(String kind) {
            List<Map<String, Object>> all = ofKind(kind);
            if (all.size() != 1) {
                throw new AssertionError("expected one " + kind + ", got " + all.size() + " among " + kinds());
            }
            return all.getFirst();
        }

        List<String> kinds() {
            return documents.stream().map(d -> Objects.toString(d.get("kind"))).sorted().collect(Collectors.toList());
        }
    }

    /** Walks a map path such as "spec.template.spec.containers"; list elements by index ("containers.0"). */
    @SuppressWarnings("unchecked")
    static <T> T at(Object root, String path) {
        Object node = root;
        for (String part : path.split("\\.")) {
            if (node instanceof Map<?, ?> m) {
                node = m.get(part);
            } else if (node instanceof List<?> l && part.chars().allMatch(Character::isDigit)) {
                node = l.get(Integer.parseInt(part));
            } else {
                throw new AssertionError("no " + part + " in " + path + " (at " + node + ")");
            }
        }
        return (T) node;
    }
}
