package dev.imexprobe.ship;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import com.marcnuri.helm.Helm;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A real `helm upgrade` (helm-java) against a fake Kubernetes API (WireMock) that already holds the release, its
 * token Secret and its ComputeDomain: the chart's lookups must find them — the same token, not a new one; the
 * ComputeDomain's UID in every per-node channel claim. The rendered revision is read back from the release
 * record Helm writes (a Secret sh.helm.release.v1.*).
 */
class UpgradeKeepsTokenTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String NS = Chart.NAMESPACE;
    static final String OLD_TOKEN = "Kept-Across-Upgrades-0123456789A";
    static final String CD_UID = "7d1e2f30-aaaa-4bbb-8ccc-0123456789ab";

    WireMockServer api;
    @TempDir
    Path dir;

    @BeforeEach
    void fakeApiServer() throws Exception {
        api = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        api.start();
        api.stubFor(any(anyUrl()).atPriority(10).willReturn(aResponse().withStatus(404)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}")));
        api.stubFor(get(urlPathEqualTo("/version")).willReturn(okJson(
                "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"v1.34.0\",\"platform\":\"linux/amd64\"}")));
        api.stubFor(get(urlPathEqualTo("/api")).willReturn(okJson("{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                + "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\",\"serverAddress\":\"127.0.0.1\"}]}")));
        api.stubFor(get(urlPathEqualTo("/apis")).willReturn(okJson("{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":["
                + group("apps", "v1") + "," + group("resource.k8s.io", "v1") + "," + group("resource.nvidia.com", "v1beta1") + "]}")));
        api.stubFor(get(urlPathEqualTo("/apis/resource.k8s.io/v1")).willReturn(okJson(resources("resource.k8s.io/v1",
                "resourceclaims:ResourceClaim", "resourceclaimtemplates:ResourceClaimTemplate"))));
        api.stubFor(get(urlPathEqualTo("/apis/resource.nvidia.com/v1beta1")).willReturn(okJson(resources(
                "resource.nvidia.com/v1beta1", "computedomains:ComputeDomain"))));
        // The ComputeDomain revision 1 created, now with the UID the API server gave it.
        api.stubFor(get(urlPathEqualTo("/apis/resource.nvidia.com/v1beta1/namespaces/" + NS + "/computedomains/imexprobe"))
                .willReturn(okJson("{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"ComputeDomain\","
                        + "\"metadata\":{\"name\":\"imexprobe\",\"namespace\":\"" + NS + "\",\"uid\":\"" + CD_UID + "\","
                        + "\"labels\":{\"app.kubernetes.io/managed-by\":\"Helm\"},\"annotations\":{\"meta.helm.sh/release-name\":"
                        + "\"imexprobe\",\"meta.helm.sh/release-namespace\":\"" + NS + "\"}},"
                        + "\"spec\":{\"numNodes\":0,\"channel\":{\"resourceClaimTemplate\":{\"name\":\"imexprobe-channel\"}}}}")));
        api.stubFor(get(urlPathEqualTo("/api/v1")).willReturn(okJson(resources("v1", "secrets:Secret", "services:Service",
                "serviceaccounts:ServiceAccount", "configmaps:ConfigMap", "pods:Pod"))));
        api.stubFor(get(urlPathEqualTo("/apis/apps/v1")).willReturn(okJson(resources("apps/v1", "daemonsets:DaemonSet",
                "statefulsets:StatefulSet"))));
        // Helm's release storage: the deployed revision 1.
        api.stubFor(get(urlPathEqualTo("/api/v1/namespaces/" + NS + "/secrets")).willReturn(okJson(
                "{\"kind\":\"SecretList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[" + releaseSecret() + "]}")));
        // The token Secret revision 1 made.
        api.stubFor(get(urlPathEqualTo("/api/v1/namespaces/" + NS + "/secrets/imexprobe-auth")).willReturn(okJson(tokenSecret())));
        // Writes succeed and echo what was sent.
        api.stubFor(any(anyUrl()).atPriority(5).withHeader("Content-Type", com.github.tomakehurst.wiremock.client.WireMock.matching(".*"))
                .andMatching(r -> com.github.tomakehurst.wiremock.matching.MatchResult.of(!r.getMethod().getName().equals("GET")))
                .willReturn(aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                        .withBody("{{request.body}}").withTransformers("response-template")));
    }

    @AfterEach
    void stop() {
        api.stop();
    }

    @Test
    void upgradeRendersTheTokenTheClusterAlreadyHas() throws Exception {
        String manifest = upgrade("imex:\n  channel:\n    mode: observer\nnetworkPolicy:\n  enabled: false\n"
                + "nodeCondition:\n  enabled: false\n"); // the fake API serves no RBAC group
        Map<String, Object> secret = Chart.Rendered.parse(manifest).one("Secret");
        @SuppressWarnings("unchecked")
        Map<String, String> data = (Map<String, String>) secret.get("data");
        assertThat(new String(Base64.getDecoder().decode(data.get("token")), StandardCharsets.UTF_8)).isEqualTo(OLD_TOKEN);
    }

    @Test
    void perGpuUpgradeWritesTheComputeDomainUidIntoEachNodesClaim() throws Exception {
        String manifest = upgrade("mode: perGpu\nperGpu:\n  nodes: [node-a, node-b]\nimex:\n  channel:\n    mode: computeDomain\nnetworkPolicy:\n  enabled: false\n"
                + "nodeCondition:\n  enabled: false\n");
        var claims = Chart.Rendered.parse(manifest).ofKind("ResourceClaim");
        assertThat(claims).hasSize(2).allSatisfy(c -> assertThat(Chart.<String>at(c,
                "spec.devices.config.0.opaque.parameters.domainID")).isEqualTo(CD_UID));
    }

    String upgrade(String valuesYaml) throws Exception {
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: fake, cluster: {server: 'http://127.0.0.1:%d'}}]
                contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: %s}}]
                current-context: fake
                users: [{name: fake, user: {token: fake}}]
                """.formatted(api.port(), NS));
        Path values = dir.resolve("values.yaml");
        Files.writeString(values, valuesYaml);
        try {
            new Helm(Project.CHART).upgrade().withName(Chart.RELEASE).withNamespace(NS).withKubeConfig(kubeconfig)
                    .withValuesFile(values).disableOpenApiValidation().call();
        } catch (RuntimeException e) {
            // Whatever the fake API cannot do after Helm recorded the new revision does not matter here.
            System.err.println("helm upgrade against the fake API: " + e.getMessage());
        }
        return recordedManifest();
    }

    static String group(String name, String version) {
        return "{\"name\":\"" + name + "\",\"versions\":[{\"groupVersion\":\"" + name + "/" + version + "\",\"version\":\""
                + version + "\"}],\"preferredVersion\":{\"groupVersion\":\"" + name + "/" + version + "\",\"version\":\""
                + version + "\"}}";
    }

    /**
     * The manifest of the revision Helm recorded: its POST of a Secret sh.helm.release.v1.* whose data.release is
     * base64(gzip(release JSON)). client-go sends core objects as Kubernetes protobuf ("k8s\0" + runtime.Unknown),
     * so the body is read with a few lines of protobuf wire format.
     */
    String recordedManifest() throws Exception {
        List<LoggedRequest> posts = api.findAll(postRequestedFor(urlPathEqualTo("/api/v1/namespaces/" + NS + "/secrets")));
        for (LoggedRequest p : posts) {
            Map<String, byte[]> secret = secretFromBody(p.getBody());
            if (new String(secret.getOrDefault("name", new byte[0]), StandardCharsets.UTF_8).startsWith("sh.helm.release.v1.")) {
                byte[] gz = Base64.getDecoder().decode(new String(secret.get("data:release"), StandardCharsets.UTF_8));
                try (var in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
                    return JSON.readTree(in.readAllBytes()).get("manifest").asText();
                }
            }
        }
        throw new AssertionError("helm recorded no new revision; requests: " + api.getAllServeEvents().stream()
                .map(e -> e.getRequest().getMethod() + " " + e.getRequest().getUrl() + " -> " + e.getResponse().getStatus())
                .toList());
    }

    /** name and data:<key> of a Secret sent as JSON or as Kubernetes protobuf. */
    static Map<String, byte[]> secretFromBody(byte[] body) throws Exception {
        Map<String, byte[]> out = new java.util.HashMap<>();
        if (body.length > 4 && body[0] == 'k' && body[1] == '8' && body[2] == 's' && body[3] == 0) {
            byte[] raw = Proto.fields(java.util.Arrays.copyOfRange(body, 4, body.length)).get(2).getFirst();
            Map<Integer, List<byte[]>> secret = Proto.fields(raw);
            byte[] meta = secret.get(1).getFirst();
            out.put("name", Proto.fields(meta).get(1).getFirst());
            for (byte[] entry : secret.getOrDefault(2, List.of())) {
                Map<Integer, List<byte[]>> kv = Proto.fields(entry);
                out.put("data:" + new String(kv.get(1).getFirst(), StandardCharsets.UTF_8), kv.get(2).getFirst());
            }
        } else {
            JsonNode json = JSON.readTree(body);
            out.put("name", json.at("/metadata/name").asText().getBytes(StandardCharsets.UTF_8));
            json.path("data").properties().forEach(e -> out.put("data:" + e.getKey(),
                    Base64.getDecoder().decode(e.getValue().asText())));
        }
        return out;
    }

    /** Just enough protobuf: the length-delimited fields of a message, by field number. */
    static final class Proto {
        static Map<Integer, List<byte[]>> fields(byte[] msg) {
            Map<Integer, List<byte[]>> fields = new java.util.HashMap<>();
            int[] pos = {0};
            while (pos[0] < msg.length) {
                long key = varint(msg, pos);
                int wire = (int) (key & 7);
                int number = (int) (key >>> 3);
                switch (wire) {
                    case 0 -> varint(msg, pos);
                    case 1 -> pos[0] += 8;
                    case 5 -> pos[0] += 4;
                    case 2 -> {
                        int len = (int) varint(msg, pos);
                        fields.computeIfAbsent(number, k -> new java.util.ArrayList<>())
                                .add(java.util.Arrays.copyOfRange(msg, pos[0], pos[0] + len));
                        pos[0] += len;
                    }
                    default -> throw new IllegalStateException("wire type " + wire);
                }
            }
            return fields;
        }

        static long varint(byte[] b, int[] pos) {
            long v = 0;
            for (int shift = 0; ; shift += 7) {
                byte x = b[pos[0]++];
                v |= (long) (x & 0x7f) << shift;
                if ((x & 0x80) == 0) {
                    return v;
                }
            }
        }
    }

    static String resources(String groupVersion, String... nameKinds) {
        StringBuilder sb = new StringBuilder("{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"")
                .append(groupVersion).append("\",\"resources\":[");
        for (int i = 0; i < nameKinds.length; i++) {
            String[] nk = nameKinds[i].split(":");
            sb.append(i == 0 ? "" : ",").append("{\"name\":\"").append(nk[0]).append("\",\"singularName\":\"\",")
                    .append("\"namespaced\":true,\"kind\":\"").append(nk[1])
                    .append("\",\"verbs\":[\"create\",\"delete\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]}");
        }
        return sb.append("]}").toString();
    }

    static String tokenSecret() {
        return "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"imexprobe-auth\",\"namespace\":\"" + NS + "\","
                + "\"labels\":{\"app.kubernetes.io/managed-by\":\"Helm\"},"
                + "\"annotations\":{\"meta.helm.sh/release-name\":\"imexprobe\",\"meta.helm.sh/release-namespace\":\"" + NS + "\"}},"
                + "\"type\":\"Opaque\",\"data\":{\"token\":\""
                + Base64.getEncoder().encodeToString(OLD_TOKEN.getBytes(StandardCharsets.UTF_8)) + "\"}}";
    }

    /** Revision 1 as Helm stores it: a Secret whose data.release is base64(gzip(release JSON)). */
    static String releaseSecret() throws Exception {
        ObjectNode rel = JSON.createObjectNode();
        rel.put("name", Chart.RELEASE).put("namespace", NS).put("version", 1);
        rel.putObject("info").put("status", "deployed").put("first_deployed", "2026-01-01T00:00:00Z")
                .put("last_deployed", "2026-01-01T00:00:00Z");
        rel.putObject("chart").putObject("metadata").put("name", "imexprobe").put("version", "0.1.0")
                .put("apiVersion", "v2").put("appVersion", "0.1.0");
        rel.putObject("config");
        rel.put("manifest", "---\n# Source: imexprobe/templates/secret.yaml\n"
                + "apiVersion: v1\nkind: Secret\nmetadata:\n  name: imexprobe-auth\n  namespace: " + NS + "\ntype: Opaque\ndata:\n  token: \""
                + Base64.getEncoder().encodeToString(OLD_TOKEN.getBytes(StandardCharsets.UTF_8)) + "\"\n");
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (var out = new GZIPOutputStream(gz)) {
            out.write(JSON.writeValueAsBytes(rel));
        }
        String encoded = Base64.getEncoder().encodeToString(gz.toByteArray());
        String data = Base64.getEncoder().encodeToString(encoded.getBytes(StandardCharsets.UTF_8));
        return "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"sh.helm.release.v1.imexprobe.v1\","
                + "\"namespace\":\"" + NS + "\",\"labels\":{\"name\":\"imexprobe\",\"owner\":\"helm\",\"status\":\"deployed\","
                + "\"version\":\"1\"}},\"type\":\"helm.sh/release.v1\",\"data\":{\"release\":\"" + data + "\"}}";
    }
}
