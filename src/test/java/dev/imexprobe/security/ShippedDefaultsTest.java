package dev.imexprobe.security;

import com.marcnuri.helm.Helm;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator gets without changing a value: the chart rendered by real Helm (helm-java) with its defaults,
 * the Dockerfile, and the agent's application.properties, checked for the security they promise. The ship tests
 * (HelmChartTest, DockerfileTest) cover every value combination; this is the one place that states the secure
 * defaults together: auth on with a generated token, no root, a read-only root filesystem, no privilege, no
 * service-account token, a NetworkPolicy, the ladder off, and only health, info and prometheus exposed.
 */
class ShippedDefaultsTest {

    static Path root;
    static List<Map<String, Object>> docs;

    @BeforeAll
    static void render() {
        root = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(root.resolve("helm/imexprobe"))) {
            root = root.getParent();
        }
        String text = new Helm(root.resolve("helm/imexprobe")).template().withName("imexprobe")
                .withNamespace("imexprobe").withKubeVersion("1.34.0").call();
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        docs = new ArrayList<>();
        for (Object doc : new Yaml(options).loadAll(text)) {
            if (doc != null) {
                @SuppressWarnings("unchecked")
                Map<String, Object> map = (Map<String, Object>) doc;
                docs.add(map);
            }
        }
    }

    static List<Map<String, Object>> ofKind(String kind) {
        return docs.stream().filter(d -> kind.equals(d.get("kind"))).toList();
    }

    @SuppressWarnings("unchecked")
    static <T> T at(Object node, String path) {
        for (String part : path.split("\\.")) {
            node = node instanceof Map<?, ?> m ? m.get(part)
                    : node instanceof List<?> l ? l.get(Integer.parseInt(part)) : null;
        }
        return (T) node;
    }

    static Map<String, Object> daemonSet() {
        assertThat(ofKind("DaemonSet")).hasSize(1);
        return ofKind("DaemonSet").getFirst();
    }

    static Map<String, Map<String, Object>> env(Map<String, Object> container) {
        Map<String, Map<String, Object>> env = new LinkedHashMap<>();
        List<Map<String, Object>> list = at(container, "env");
        for (Map<String, Object> e : list) {
            env.put((String) e.get("name"), e);
        }
        return env;
    }

    @Test
    void authIsOnByDefaultWithAGeneratedTokenFromASecret() {
        Map<String, Object> secret = ofKind("Secret").getFirst();
        String token = new String(Base64.getDecoder().decode((String) at(secret, "data.token")), StandardCharsets.UTF_8);
        assertThat(token).as("the generated token").matches("[A-Za-z0-9]{32}");

        Map<String, Object> agent = at(daemonSet(), "spec.template.spec.containers.0");
        Map<String, Map<String, Object>> env = env(agent);
        Map<String, Object> ref = at(env.get("IMEXPROBE_AUTH_TOKEN"), "valueFrom.secretKeyRef");
        assertThat(ref).as("IMEXPROBE_AUTH_TOKEN comes from the Secret").isNotNull();
        assertThat(ref.get("name")).isEqualTo(at(secret, "metadata.name"));
        assertThat(ref.get("key")).isEqualTo("token");
        assertThat(env).as("nothing turns the requirement off").doesNotContainKey("IMEXPROBE_AUTH_REQUIRED");
        assertThat(env.get("IMEXPROBE_LADDER_ENABLED").get("value")).as("the ladder is off").isEqualTo("false");
        assertThat(env.values()).as("the token itself is in no plain env value")
                .noneMatch(e -> token.equals(e.get("value")));
    }

    @Test
    void thePodRunsAsNobodyWithAReadOnlyRootAndNoPrivilege() {
        Map<String, Object> spec = at(daemonSet(), "spec.template.spec");
        assertThat((Boolean) at(spec, "securityContext.runAsNonRoot")).isTrue();
        assertThat((Integer) at(spec, "securityContext.runAsUser")).isNotZero();
        assertThat(spec).doesNotContainKeys("hostNetwork", "hostPID", "hostIPC");
        assertThat((Boolean) at(spec, "automountServiceAccountToken"))
                .as("DNS discovery needs no API token, the Node condition (on by default) does").isTrue();
        Map<String, Object> agent = at(spec, "containers.0");
        assertThat((Boolean) at(agent, "securityContext.readOnlyRootFilesystem")).isTrue();
        assertThat((Boolean) at(agent, "securityContext.allowPrivilegeEscalation")).isFalse();
        assertThat((Boolean) at(agent, "securityContext.runAsNonRoot")).isTrue();
        assertThat((Object) at(agent, "securityContext.privileged")).isNull();
        assertThat((List<String>) at(agent, "securityContext.capabilities.drop")).containsExactly("ALL");
        assertThat((Object) at(agent, "securityContext.capabilities.add")).isNull();
        // The only writable place is the /tmp emptyDir the JNI library is extracted to.
        List<Map<String, Object>> mounts = at(agent, "volumeMounts");
        assertThat(mounts).extracting(m -> m.get("mountPath")).containsExactly("/tmp");
        assertThat((List<Map<String, Object>>) at(spec, "volumes")).allSatisfy(v -> assertThat(v).containsKey("emptyDir")
                .doesNotContainKey("hostPath"));
    }

    @Test
    void theImageRunsAsTheSameNonRootUser() throws IOException {
        List<String> users = new ArrayList<>();
        boolean runtimeStage = false;
        for (String line : Files.readAllLines(root.resolve("Dockerfile"))) {
            String l = line.strip();
            if (l.startsWith("FROM ")) {
                runtimeStage = !l.contains(" AS build");
            } else if (runtimeStage && l.startsWith("USER ")) {
                users.add(l.substring(5).strip());
            }
        }
        assertThat(users).as("USER of the runtime stage").hasSize(1);
        int uid = Integer.parseInt(users.getFirst().split(":")[0]);
        assertThat(uid).isNotZero();
        Integer chartUid = at(daemonSet(), "spec.template.spec.securityContext.runAsUser");
        assertThat(uid).as("the Dockerfile's USER is the chart's runAsUser").isEqualTo(chartUid);
    }

    @Test
    void aNetworkPolicyLimitsWhoReachesTheAgentAndWhereItsProbesGo() {
        assertThat(ofKind("NetworkPolicy")).hasSize(1);
        Map<String, Object> np = ofKind("NetworkPolicy").getFirst();
        assertThat((List<String>) at(np, "spec.policyTypes")).containsExactlyInAnyOrder("Ingress", "Egress");
        List<Map<String, Object>> ingress = at(np, "spec.ingress");
        assertThat(ingress).hasSize(1);
        assertThat((List<Map<String, Object>>) at(ingress.getFirst(), "ports")).singleElement()
                .satisfies(p -> assertThat(p.get("port")).isEqualTo(8080));
        // Egress: other agents on the agent port, DNS, and the API server's ports for the Node condition; nothing
        // else by default (so /probe reaches only agents and those two API ports).
        List<Map<String, Object>> egress = at(np, "spec.egress");
        List<Object> ports = new ArrayList<>();
        egress.forEach(e -> ((List<Map<String, Object>>) e.get("ports")).forEach(p -> ports.add(p.get("port"))));
        assertThat(ports).containsExactlyInAnyOrder(8080, 53, 53, 443, 6443);
    }

    @Test
    void theAgentExposesOnlyHealthInfoAndPrometheus() throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(root.resolve("src/main/resources/application.properties"))));
        assertThat(p.getProperty("management.endpoints.web.exposure.include")).isEqualTo("health,info,prometheus");
        assertThat(p.stringPropertyNames()).noneMatch(k -> k.startsWith("management.endpoint.env")
                || k.startsWith("management.endpoint.heapdump") || k.startsWith("management.endpoint.shutdown")
                || k.equals("server.error.include-stacktrace") || k.equals("server.error.include-message"));
        assertThat(p.getProperty("spring.mvc.formcontent.filter.enabled")).isEqualTo("false");
    }
}
