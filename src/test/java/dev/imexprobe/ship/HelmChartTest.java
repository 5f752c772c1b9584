package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.at;
import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import dev.imexprobe.agent.AgentProperties;
import dev.imexprobe.agent.KubernetesProperties;
import dev.imexprobe.agent.NodeConditionProperties;
import dev.imexprobe.agent.UnreadVariables;
import dev.imexprobe.ship.Chart.Rendered;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Real Helm (helm-java) lint and template of helm/imexprobe, each document loaded into the Kubernetes schema. */
class HelmChartTest {

    static final String UID = "0f6c2a3e-1111-4222-8333-944445555666";
    static final List<String> NODES = List.of("gb200-a.example.com", "gb200-b");

    /** Value combinations every test below renders: each mode, each channel mode, and the optional parts. */
    static Stream<Arguments> combinations() {
        return Stream.of(
                Arguments.of("defaults (perNode, observer, dns)", values()),
                Arguments.of("perNode computeDomain", values("imex.channel.mode", "computeDomain")),
                Arguments.of("perNode hostPath, kubernetes discovery, GPUs from the device plugin, API CIDR, monitoring",
                        values("imex.channel.mode", "hostPath", "peers.discovery", "kubernetes",
                                "gpuResource.enabled", true, "gpuResource.count", 4,
                                "networkPolicy.apiServer.cidrs", List.of("10.0.0.1/32"),
                                "serviceMonitor.enabled", true, "prometheusRule.enabled", true, "dashboard.enabled", true)),
                Arguments.of("perNode observer, no NetworkPolicy, existing Secret, digest",
                        values("imex.channel.mode", "observer", "networkPolicy.enabled", false,
                                "auth.existingSecret", "shared-token", "auth.existingSecretKey", "secret",
                                "image.digest", "sha256:" + "a".repeat(64), "runtimeClassName", "")),
                Arguments.of("perGpu devicePlugin, computeDomain with UID",
                        values("mode", "perGpu", "perGpu.nodes", NODES, "perGpu.gpusPerNode", 4, "imex.channel.mode", "computeDomain",
                                "imex.channel.computeDomain.uid", UID)),
                Arguments.of("perGpu devicePlugin, computeDomain before the UID exists (first install)",
                        values("mode", "perGpu", "perGpu.nodes", NODES, "imex.channel.mode", "computeDomain")),
                Arguments.of("perGpu dra GPUs, hostPath, kubernetes discovery",
                        values("mode", "perGpu", "perGpu.nodes", NODES, "perGpu.gpuSource", "dra",
                                "imex.channel.mode", "hostPath", "peers.discovery", "kubernetes")),
                Arguments.of("perGpu dra GPUs, computeDomain with UID, everything on",
                        values("mode", "perGpu", "perGpu.nodes", List.of("node-1"), "perGpu.gpuSource", "dra", "imex.channel.mode", "computeDomain",
                                "imex.channel.computeDomain.uid", UID, "serviceMonitor.enabled", true,
                                "prometheusRule.enabled", true, "dashboard.enabled", true)));
    }

    @Test
    void lintStrictPasses() {
        LintResult result = new Helm(Project.CHART).lint().strict().call();
        assertThat(result.isFailed()).as("helm lint --strict: %s", result.getMessages()).isFalse();
        assertThat(result.getMessages()).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("combinations")
    void everyDocumentFitsItsSchema(String name, Map<String, Object> values) {
        Rendered r = Chart.render(values);
        assertThat(r.documents()).isNotEmpty();
        for (Map<String, Object> doc : r.documents()) {
            if (KubernetesSchema.CUSTOM.contains(KubernetesSchema.typeKey(doc))) {
                CustomResources.check(doc);
            } else {
                KubernetesSchema.load(doc);
            }
            String kind = (String) doc.get("kind");
            String docName = Chart.at(doc, "metadata.name");
            // Cluster-scoped RBAC has no namespace; Node Events are created where the kubelet's are (NodeConditionChartTest).
            String namespace = kind.startsWith("Cluster") ? null : docName.endsWith("-node-events") ? "default" : Chart.NAMESPACE;
            assertThat(Chart.<String>at(doc, "metadata.namespace")).as("namespace of %s", KubernetesSchema.typeKey(doc))
                    .isEqualTo(namespace);
        }
    }

    /**
     * Every {@code IMEXPROBE_*} variable the chart sets is one the agent reads: a setting of its properties records,
     * in either of relaxed binding's forms (dashes dropped, or made underscores), or a {@code ${imexprobe.…}}
     * placeholder of its sources. A variable the chart misspelt would change nothing on every node, and the agent
     * would only warn of it in each pod's log.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("combinations")
    void everyVariableTheChartSetsIsOneTheAgentReads(String name, Map<String, Object> values) throws IOException {
        Set<String> read = new TreeSet<>(UnreadVariables.READ_OUTSIDE_SPRING);
        List<String> properties = new ArrayList<>();
        try (Stream<Path> sources = Files.walk(Path.of("src/main/java"))) {
            for (Path f : sources.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher m = Pattern.compile("\\$\\{(imexprobe\\.[a-z0-9.-]+)").matcher(Files.readString(f));
                while (m.find()) {
                    properties.add(m.group(1));
                }
            }
        }
        assertThat(properties).as("the sources' placeholders").contains("imexprobe.channel.mode");
        for (String property : properties) {
            read.addAll(UnreadVariables.variables(property));
        }
        Set<String> records = new TreeSet<>();
        UnreadVariables.addVariables(records, "imexprobe", AgentProperties.class);
        UnreadVariables.addVariables(records, "imexprobe.kubernetes", KubernetesProperties.class);
        UnreadVariables.addVariables(records, "imexprobe.node-condition", NodeConditionProperties.class);
        read.addAll(records);
        Map<String, Object> all = new LinkedHashMap<>(values);
        all.putAll(values("cliqueLabel.enabled", true, "agent.ladderEnabled", true, "agent.metricsPairs", true));
        List<PodTemplateSpec> pods = podTemplates(Chart.render(all));
        assertThat(pods).isNotEmpty();
        for (PodTemplateSpec pod : pods) {
            Set<String> set = env(pod.getSpec().getContainers().getFirst()).keySet().stream()
                    .filter(k -> k.startsWith("IMEXPROBE_")).collect(Collectors.toCollection(TreeSet::new));
            assertThat(set).as("the chart's variables").contains("IMEXPROBE_MESH_INTERVAL", "IMEXPROBE_CHANNEL_MODE");
            assertThat(set).as("variables no setting reads").isSubsetOf(read);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("combinations")
    void everyAgentPodIsLockedDown(String name, Map<String, Object> values) {
        Rendered r = Chart.render(values);
        List<PodTemplateSpec> pods = podTemplates(r);
        assertThat(pods).isNotEmpty();
        for (PodTemplateSpec pod : pods) {
            PodSpec spec = pod.getSpec();
            assertThat(spec.getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(spec.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
            assertThat(spec.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
            Container agent = spec.getContainers().getFirst();
            assertThat(spec.getContainers()).hasSize(1);
            assertThat(agent.getArgs()).containsExactly("serve");
            assertThat(agent.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
            assertThat(agent.getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(agent.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
            assertThat(agent.getSecurityContext().getCapabilities().getAdd()).isNullOrEmpty();
            if ("hostPath".equals(channelMode(values))) {
                // A bind-mounted device node still needs the device cgroup: privileged, and the API then demands
                // allowPrivilegeEscalation true.
                assertThat(agent.getSecurityContext().getPrivileged()).isTrue();
                assertThat(agent.getSecurityContext().getAllowPrivilegeEscalation()).isTrue();
                assertThat(agent.getVolumeMounts()).anySatisfy(v -> {
                    assertThat(v.getMountPath()).isEqualTo("/dev/nvidia-caps-imex-channels");
                    assertThat(v.getReadOnly()).isTrue();
                });
                assertThat(spec.getVolumes()).filteredOn(v -> v.getHostPath() != null).singleElement()
                        .satisfies(v -> assertThat(v.getHostPath().getPath()).isEqualTo("/dev/nvidia-caps-imex-channels"));
            } else {
                assertThat(agent.getSecurityContext().getPrivileged()).isNull();
                assertThat(agent.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
                assertThat(spec.getVolumes()).allSatisfy(v -> assertThat(v.getHostPath()).isNull());
            }
            // /tmp is a writable emptyDir (the JNI library is extracted there), and it is the only writable place.
            assertThat(agent.getVolumeMounts()).filteredOn(v -> v.getMountPath().equals("/tmp")).singleElement()
                    .satisfies(v -> assertThat(spec.getVolumes()).filteredOn(vol -> vol.getName().equals(v.getName()))
                            .singleElement().satisfies(vol -> {
                                assertThat(vol.getEmptyDir()).isNotNull();
                                assertThat(vol.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("64Mi"));
                            }));
            assertThat(agent.getResources().getRequests()).containsEntry("cpu", new Quantity("50m"))
                    .containsEntry("memory", new Quantity("192Mi"));
            assertThat(agent.getResources().getLimits()).containsEntry("memory", new Quantity("512Mi"));
            assertThat(agent.getStartupProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
            assertThat(agent.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
            assertThat(agent.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/readiness");
            assertThat(agent.getPorts()).singleElement().satisfies(p -> {
                assertThat(p.getContainerPort()).isEqualTo(8080);
                assertThat(p.getName()).isEqualTo("http");
            });
            assertThat(spec.getTolerations()).anySatisfy(t -> {
                assertThat(t.getKey()).isEqualTo("nvidia.com/gpu");
                assertThat(t.getOperator()).isEqualTo("Exists");
            });
            assertThat(spec.getNodeSelector()).containsEntry("nvidia.com/gpu.present", "true");

            Map<String, EnvVar> env = env(agent);
            assertThat(env.get("SERVER_PORT").getValue()).isEqualTo("8080");
            // The image's JAVA_TOOL_OPTIONS applies untouched unless agent.javaToolOptions adds to it (OperatorValuesTest).
            assertThat(env).doesNotContainKey("JAVA_TOOL_OPTIONS");
            assertThat(env.get("IMEXPROBE_NODE_NAME").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
            assertThat(env.get("IMEXPROBE_AUTH_TOKEN").getValueFrom().getSecretKeyRef().getName()).isNotBlank();
            assertThat(env.get("IMEXPROBE_MESH_INTERVAL").getValue()).isEqualTo("30s");
            assertThat(env.get("IMEXPROBE_MESH_SUBSET").getValue()).as("every peer every round").isEqualTo("0");
            assertThat(env.get("IMEXPROBE_METRICS_PAIRS").getValue()).isEqualTo("false");
            assertThat(env.get("IMEXPROBE_LADDER_ENABLED").getValue()).isEqualTo("false");
            if (env.containsKey("IMEXPROBE_PEERS_KUBERNETES_SELECTOR")) {
                assertThat(env).doesNotContainKey("IMEXPROBE_PEERS_DNS");
                assertThat(env.get("IMEXPROBE_PEERS_KUBERNETES_SELECTOR").getValue()).isEqualTo(
                        "app.kubernetes.io/name=imexprobe,app.kubernetes.io/instance=imexprobe,app.kubernetes.io/component=agent");
                assertThat(env.get("IMEXPROBE_PEERS_KUBERNETES_NAMESPACE").getValueFrom().getFieldRef().getFieldPath())
                        .isEqualTo("metadata.namespace");
                assertThat(spec.getAutomountServiceAccountToken()).isTrue();
                // The selector must match the pods themselves, or an agent finds no peers.
                assertThat(pod.getMetadata().getLabels()).containsEntry("app.kubernetes.io/name", "imexprobe")
                        .containsEntry("app.kubernetes.io/instance", "imexprobe")
                        .containsEntry("app.kubernetes.io/component", "agent");
            } else {
                assertThat(env.get("IMEXPROBE_PEERS_DNS").getValue()).isEqualTo("imexprobe.imexprobe.svc:8080");
                // DNS discovery needs no token; the Node condition (on by default) does: NodeConditionChartTest.
                assertThat(spec.getAutomountServiceAccountToken()).isEqualTo(env.containsKey("IMEXPROBE_NODECONDITION_ENABLED"));
            }
        }
    }

    @Test
    void computeDomainRendersOneDaemonSetSeeingAllGpusWithoutTakingThem() {
        Rendered r = Chart.render(values("imex.channel.mode", "computeDomain"));
        assertThat(r.kinds()).containsExactly("ClusterRole", "ClusterRoleBinding", "ComputeDomain", "DaemonSet",
                "NetworkPolicy", "Role", "RoleBinding", "Secret", "Service", "ServiceAccount");
        DaemonSet ds = (DaemonSet) KubernetesSchema.load(r.one("DaemonSet"));
        PodSpec spec = ds.getSpec().getTemplate().getSpec();
        Container agent = spec.getContainers().getFirst();
        assertThat(agent.getImage()).isEqualTo("ghcr.io/imexprobe/imexprobe:0.1.0");
        assertThat(spec.getRuntimeClassName()).isEqualTo("nvidia");
        assertThat(env(agent).get("NVIDIA_VISIBLE_DEVICES").getValue()).isEqualTo("all");
        assertThat(agent.getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");
        // One channel claim per pod from the ComputeDomain's template.
        assertThat(spec.getResourceClaims()).singleElement().satisfies(c -> {
            assertThat(c.getName()).isEqualTo("imex-channel");
            assertThat(c.getResourceClaimTemplateName()).isEqualTo("imexprobe-channel");
        });
        assertThat(agent.getResources().getClaims()).singleElement()
                .satisfies(c -> assertThat(c.getName()).isEqualTo("imex-channel"));
        Map<String, Object> cd = r.one("ComputeDomain");
        assertThat(Chart.<String>at(cd, "spec.channel.resourceClaimTemplate.name")).isEqualTo("imexprobe-channel");
        assertThat(Chart.<Integer>at(cd, "spec.numNodes")).isZero();
        // Selector labels must not carry the version: a DaemonSet selector is immutable.
        assertThat(ds.getSpec().getSelector().getMatchLabels()).containsOnlyKeys("app.kubernetes.io/name",
                "app.kubernetes.io/instance", "app.kubernetes.io/component");
        assertThat(ds.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable().getIntVal()).isEqualTo(1);
    }

    @Test
    void perGpuRendersOneSharedChannelClaimAndOneWorkloadPerNodeEachPodOneGpu() {
        Rendered r = Chart.render(values("mode", "perGpu", "perGpu.nodes", NODES, "perGpu.gpusPerNode", 4, "imex.channel.mode", "computeDomain",
                "imex.channel.computeDomain.uid", UID));
        assertThat(r.ofKind("DaemonSet")).isEmpty();
        List<ResourceClaim> claims = r.ofKind("ResourceClaim").stream().map(d -> (ResourceClaim) KubernetesSchema.load(d)).toList();
        List<StatefulSet> sets = r.ofKind("StatefulSet").stream().map(d -> (StatefulSet) KubernetesSchema.load(d)).toList();
        assertThat(claims).hasSize(NODES.size());
        assertThat(sets).hasSize(NODES.size());
        assertThat(claims).extracting(c -> c.getMetadata().getName())
                .containsExactlyInAnyOrder("imexprobe-gb200-a-example-com-channel", "imexprobe-gb200-b-channel");
        for (ResourceClaim claim : claims) {
            var request = claim.getSpec().getDevices().getRequests().getFirst();
            assertThat(claim.getSpec().getDevices().getRequests()).hasSize(1);
            assertThat(request.getName()).isEqualTo("channel");
            assertThat(request.getExactly().getDeviceClassName()).isEqualTo("compute-domain-default-channel.nvidia.com");
            var config = claim.getSpec().getDevices().getConfig().getFirst();
            assertThat(config.getRequests()).containsExactly("channel");
            assertThat(config.getOpaque().getDriver()).isEqualTo("compute-domain.nvidia.com");
            @SuppressWarnings("unchecked")
            Map<String, Object> params = Serialization.convert(config.getOpaque().getParameters());
            assertThat(params).containsEntry("apiVersion", "resource.nvidia.com/v1beta1")
                    .containsEntry("kind", "ComputeDomainChannelConfig").containsEntry("domainID", UID);
        }
        Map<String, String> claimByNode = claims.stream().collect(Collectors.toMap(
                c -> c.getMetadata().getAnnotations().get("imexprobe.dev/node"), c -> c.getMetadata().getName()));
        assertThat(claimByNode).containsOnlyKeys(NODES);
        for (StatefulSet set : sets) {
            String node = set.getMetadata().getAnnotations().get("imexprobe.dev/node");
            assertThat(set.getSpec().getReplicas()).isEqualTo(4);
            assertThat(set.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
            assertThat(set.getSpec().getServiceName()).isEqualTo("imexprobe");
            PodSpec spec = set.getSpec().getTemplate().getSpec();
            // Pinned to exactly its node, by name.
            var term = spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
                    .getNodeSelectorTerms().getFirst().getMatchFields().getFirst();
            assertThat(term.getKey()).isEqualTo("metadata.name");
            assertThat(term.getValues()).containsExactly(node);
            // All pods of the node share its one claim.
            assertThat(spec.getResourceClaims()).singleElement().satisfies(c -> {
                assertThat(c.getResourceClaimName()).isEqualTo(claimByNode.get(node));
                assertThat(c.getResourceClaimTemplateName()).isNull();
            });
            Container agent = spec.getContainers().getFirst();
            assertThat(agent.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("1"));
            assertThat(env(agent)).doesNotContainKey("NVIDIA_VISIBLE_DEVICES");
            assertThat(set.getSpec().getSelector().getMatchLabels()).containsEntry("imexprobe.dev/workload",
                    set.getMetadata().getName());
            assertThat(set.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(
                    set.getSpec().getSelector().getMatchLabels());
        }
    }

    @Test
    void perGpuBeforeTheComputeDomainExistsRendersNoClaimYetAndSaysSo() {
        Rendered r = Chart.render(values("mode", "perGpu", "perGpu.nodes", NODES, "imex.channel.mode", "computeDomain"));
        assertThat(r.ofKind("ResourceClaim")).isEmpty();
        assertThat(r.ofKind("StatefulSet")).hasSize(2);
        assertThat(r.ofKind("ComputeDomain")).hasSize(1);
    }

    @Test
    void perGpuWithDraGpusAsksForExactlyOneGpuPerPod() {
        Rendered r = Chart.render(values("mode", "perGpu", "perGpu.nodes", NODES, "perGpu.gpuSource", "dra",
                "imex.channel.mode", "observer"));
        ResourceClaimTemplate gpu = (ResourceClaimTemplate) KubernetesSchema.load(r.one("ResourceClaimTemplate"));
        var request = gpu.getSpec().getSpec().getDevices().getRequests().getFirst();
        assertThat(gpu.getSpec().getSpec().getDevices().getRequests()).hasSize(1);
        assertThat(request.getExactly().getDeviceClassName()).isEqualTo("gpu.nvidia.com");
        assertThat(request.getExactly().getAllocationMode()).isEqualTo("ExactCount");
        assertThat(request.getExactly().getCount()).isEqualTo(1L);
        for (Map<String, Object> doc : r.ofKind("StatefulSet")) {
            PodSpec spec = ((StatefulSet) KubernetesSchema.load(doc)).getSpec().getTemplate().getSpec();
            assertThat(spec.getResourceClaims()).singleElement().satisfies(c -> {
                assertThat(c.getName()).isEqualTo("gpu");
                assertThat(c.getResourceClaimTemplateName()).isEqualTo(gpu.getMetadata().getName());
            });
            Container agent = spec.getContainers().getFirst();
            assertThat(agent.getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");
            assertThat(agent.getResources().getClaims()).extracting(c -> c.getName()).containsExactly("gpu");
        }
        assertThat(r.ofKind("ComputeDomain")).isEmpty();
    }

    @Test
    void longNodeNamesGiveDistinctValidNames() {
        String a = "node-" + "x".repeat(60) + ".rack1.example.com";
        String b = "node-" + "x".repeat(60) + ".rack2.example.com";
        Rendered r = Chart.render(values("mode", "perGpu", "perGpu.nodes", List.of(a, b), "imex.channel.computeDomain.uid", UID));
        List<String> names = r.ofKind("StatefulSet").stream().map(d -> Chart.<String>at(d, "metadata.name")).toList();
        assertThat(names).hasSize(2).doesNotHaveDuplicates()
                .allSatisfy(n -> assertThat(n).hasSizeLessThanOrEqualTo(47).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"));
    }

    @Test
    void rbacIsExactlyReadingPodsOnlyWhenDiscoveringThroughTheApi() {
        assertThat(Chart.render(values("nodeCondition.enabled", false)).ofKind("Role")).isEmpty();
        Rendered r = Chart.render(values("peers.discovery", "kubernetes", "nodeCondition.enabled", false));
        Role role = (Role) KubernetesSchema.load(r.one("Role"));
        assertThat(role.getRules()).singleElement().satisfies(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getResources()).containsExactly("pods");
            assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
            assertThat(rule.getResourceNames()).isNullOrEmpty();
        });
        RoleBinding binding = (RoleBinding) KubernetesSchema.load(r.one("RoleBinding"));
        assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getKind()).isEqualTo("ServiceAccount");
            assertThat(s.getName()).isEqualTo("imexprobe");
            assertThat(s.getNamespace()).isEqualTo(Chart.NAMESPACE);
        });
        assertThat(r.ofKind("ClusterRole")).isEmpty();
        assertThat(r.ofKind("ClusterRoleBinding")).isEmpty();
    }

    @Test
    void networkPolicyOpensOnlyTheAgentPortAndTheNeededWayOut() {
        NetworkPolicy np = (NetworkPolicy) KubernetesSchema.load(Chart.render(values("nodeCondition.enabled", false))
                .one("NetworkPolicy"));
        assertThat(np.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
        assertThat(np.getSpec().getIngress()).singleElement().satisfies(in -> {
            assertThat(in.getPorts()).singleElement().satisfies(p -> assertPort(p, 8080, "TCP"));
            assertThat(in.getFrom()).hasSize(2);
            assertThat(in.getFrom().get(0).getPodSelector().getMatchLabels()).containsEntry("app.kubernetes.io/name", "imexprobe");
            assertThat(in.getFrom().get(0).getNamespaceSelector()).isNull();
            assertThat(in.getFrom().get(1).getNamespaceSelector().getMatchLabels())
                    .containsEntry("kubernetes.io/metadata.name", "monitoring");
            assertThat(in.getFrom().get(1).getPodSelector().getMatchLabels())
                    .containsEntry("app.kubernetes.io/name", "prometheus");
        });
        List<NetworkPolicyEgressRule> egress = np.getSpec().getEgress();
        assertThat(egress).hasSize(2);
        assertThat(egress.get(0).getPorts()).singleElement().satisfies(p -> assertPort(p, 8080, "TCP"));
        assertThat(egress.get(0).getTo()).singleElement().satisfies(t ->
                assertThat(t.getPodSelector().getMatchLabels()).containsEntry("app.kubernetes.io/component", "agent"));
        assertThat(egress.get(1).getPorts()).hasSize(2).allSatisfy(p -> assertThat(p.getPort().getIntVal()).isEqualTo(53))
                .extracting(NetworkPolicyPort::getProtocol).containsExactlyInAnyOrder("UDP", "TCP");

        NetworkPolicy api = (NetworkPolicy) KubernetesSchema.load(Chart.render(values("peers.discovery", "kubernetes",
                "networkPolicy.apiServer.cidrs", List.of("10.96.0.1/32", "192.168.10.5/32"))).one("NetworkPolicy"));
        assertThat(api.getSpec().getEgress()).hasSize(3);
        NetworkPolicyEgressRule toApi = api.getSpec().getEgress().get(2);
        assertThat(toApi.getTo()).extracting(t -> t.getIpBlock().getCidr()).containsExactly("10.96.0.1/32", "192.168.10.5/32");
        assertThat(toApi.getPorts()).extracting(p -> p.getPort().getIntVal()).containsExactly(443, 6443);
    }

    @Test
    void generatedTokenIsThirtyTwoRandomCharactersAndExistingSecretReplacesIt() {
        Secret s1 = (Secret) KubernetesSchema.load(Chart.render(values()).one("Secret"));
        Secret s2 = (Secret) KubernetesSchema.load(Chart.render(values()).one("Secret"));
        String t1 = new String(Base64.getDecoder().decode(s1.getData().get("token")));
        String t2 = new String(Base64.getDecoder().decode(s2.getData().get("token")));
        assertThat(t1).hasSize(32).matches("[A-Za-z0-9]{32}");
        assertThat(t1).as("each fresh install draws its own token").isNotEqualTo(t2);
        assertThat(s1.getMetadata().getName()).isEqualTo("imexprobe-auth");

        Rendered existing = Chart.render(values("auth.existingSecret", "shared-token", "auth.existingSecretKey", "secret"));
        assertThat(existing.ofKind("Secret")).isEmpty();
        EnvVar token = env(podTemplates(existing).getFirst().getSpec().getContainers().getFirst()).get("IMEXPROBE_AUTH_TOKEN");
        assertThat(token.getValueFrom().getSecretKeyRef().getName()).isEqualTo("shared-token");
        assertThat(token.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("secret");
    }

    @Test
    void headlessServiceListsOnlyReadyAgents() {
        Map<String, Object> svc = Chart.render(values()).one("Service");
        var service = (io.fabric8.kubernetes.api.model.Service) KubernetesSchema.load(svc);
        assertThat(service.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(service.getSpec().getPublishNotReadyAddresses()).isFalse();
        assertThat(service.getSpec().getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("http");
            assertThat(p.getPort()).isEqualTo(8080);
        });
        assertThat(service.getSpec().getSelector()).containsOnlyKeys("app.kubernetes.io/name",
                "app.kubernetes.io/instance", "app.kubernetes.io/component");
    }

    @Test
    void serviceMonitorLabelsNodeAndPodAndPrometheusRuleCarriesEveryAlert() {
        Rendered r = Chart.render(values("imex.channel.mode", "hostPath", "serviceMonitor.enabled", true, "prometheusRule.enabled", true,
                "serviceMonitor.labels", Map.of("release", "kube-prometheus-stack")));
        Map<String, Object> sm = r.one("ServiceMonitor");
        assertThat(Chart.<Map<String, String>>at(sm, "metadata.labels")).containsEntry("release", "kube-prometheus-stack");
        List<Map<String, Object>> relabel = Chart.at(sm, "spec.endpoints.0.relabelings");
        assertThat(relabel).anySatisfy(rl -> {
            assertThat(rl.get("sourceLabels")).isEqualTo(List.of("__meta_kubernetes_pod_node_name"));
            assertThat(rl.get("targetLabel")).isEqualTo("node");
        });
        assertThat(relabel).anySatisfy(rl -> {
            assertThat(rl.get("sourceLabels")).isEqualTo(List.of("__meta_kubernetes_pod_name"));
            assertThat(rl.get("targetLabel")).isEqualTo("pod");
        });
        assertThat(Chart.<String>at(sm, "spec.endpoints.0.path")).isEqualTo("/actuator/prometheus");
        assertThat(Chart.<String>at(sm, "spec.endpoints.0.port")).isEqualTo("http");
        // The ServiceMonitor must select the Service.
        Map<String, String> svcLabels = Chart.at(r.one("Service"), "metadata.labels");
        assertThat(svcLabels).containsAllEntriesOf(Chart.at(sm, "spec.selector.matchLabels"));
        List<Map<String, Object>> rules = Chart.at(r.one("PrometheusRule"), "spec.groups.0.rules");
        assertThat(rules).extracting(rule -> rule.get("alert")).containsExactly(AlertRulesTest.ALERTS.toArray());
    }

    @Test
    void dashboardConfigMapCarriesTheDashboardForTheSidecar() throws Exception {
        Map<String, Object> cm = Chart.render(values("dashboard.enabled", true)).one("ConfigMap");
        KubernetesSchema.load(cm);
        assertThat(Chart.<Map<String, String>>at(cm, "metadata.labels")).containsEntry("grafana_dashboard", "1");
        @SuppressWarnings("unchecked")
        String json = ((Map<String, String>) cm.get("data")).get("imexprobe.json");
        assertThat(json).isEqualTo(java.nio.file.Files.readString(Project.DASHBOARD).stripTrailing());
    }

    @Test
    void packagedChartCarriesTheDashboardAndSchema(@org.junit.jupiter.api.io.TempDir java.nio.file.Path out) throws Exception {
        new Helm(Project.CHART).packageIt().withDestination(out).call();
        java.nio.file.Path tgz = out.resolve("imexprobe-0.1.0.tgz");
        assertThat(tgz).isRegularFile();
        List<String> entries = new java.util.ArrayList<>();
        try (var gz = new java.util.zip.GZIPInputStream(java.nio.file.Files.newInputStream(tgz))) {
            byte[] all = gz.readAllBytes();
            // tar: 512-byte headers, name in the first 100 bytes, size (octal) at 124..136.
            for (int pos = 0; pos + 512 <= all.length; ) {
                String name = new String(all, pos, 100, java.nio.charset.StandardCharsets.US_ASCII).replace("\0", "").strip();
                if (name.isEmpty()) {
                    break;
                }
                String size = new String(all, pos + 124, 12, java.nio.charset.StandardCharsets.US_ASCII).replace("\0", "").strip();
                entries.add(name);
                pos += 512 + (int) ((Long.parseLong(size.isEmpty() ? "0" : size, 8) + 511) / 512 * 512);
            }
        }
        assertThat(entries).contains("imexprobe/dashboards/imexprobe.json", "imexprobe/values.schema.json",
                "imexprobe/templates/NOTES.txt", "imexprobe/Chart.yaml");
    }

    static Stream<Arguments> invalidValues() {
        return Stream.of(
                Arguments.of(values("mode", "perPod"), "mode", "perNode"),
                Arguments.of(values("imex.channel.mode", "manual"), "imex.channel.mode", "computeDomain"),
                Arguments.of(values("peers.discovery", "static"), "peers.discovery", "dns"),
                Arguments.of(values("imex.channel.computeDomian", Map.of("name", "x")), "computeDomian", "additional properties"),
                Arguments.of(values("agent.meshInterval", "30 seconds"), "agent.meshInterval", "does not match pattern"),
                Arguments.of(values("agent.meshSubset", -1), "agent.meshSubset", "minimum"),
                Arguments.of(values("perGpu.gpusPerNode", 0), "perGpu.gpusPerNode", "minimum"),
                Arguments.of(values("perGpu.gpuSource", "mig"), "perGpu.gpuSource", "devicePlugin"),
                Arguments.of(values("imex.channel.computeDomain.uid", "not-a-uid"), "imex.channel.computeDomain.uid", "does not match pattern"),
                Arguments.of(values("alerts.severity.agentDown", "page"), "alerts.severity.agentDown", "critical"),
                Arguments.of(values("alerts.pairIntermittentWindow", "30 minutes"), "alerts.pairIntermittentWindow", "does not match pattern"),
                Arguments.of(values("alerts.pairIntermittentRatio", 1), "alerts.pairIntermittentRatio", "exclusiveMaximum"),
                Arguments.of(values("alerts.pairIntermittentMinFailures", 0), "alerts.pairIntermittentMinFailures", "minimum"),
                Arguments.of(values("perGpu.nodes", List.of("Node_A")), "perGpu.nodes", "does not match pattern"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("invalidValues")
    void schemaRejectsInvalidValuesNamingTheKey(Map<String, Object> values, String key, String reason) {
        assertThatThrownBy(() -> Chart.render(values))
                .hasMessageContaining("values don't meet the specifications of the schema")
                .hasMessageContaining(key.substring(key.lastIndexOf('.') + 1))
                .hasMessageContaining(reason);
    }

    /** A pair's result stands until its next probe: pairFailingFor no longer than the interval fired on one failure. */
    @ParameterizedTest(name = "pairFailingFor {0}, meshInterval {1}: refused {2}")
    @org.junit.jupiter.params.provider.CsvSource({
            "5m, 10m, true", "5m, 5m, true", "300000ms, 5m, true", "1h30m, 2h, true", "59s, 1m, true",
            "300001ms, 5m, false", "1h30m, 1h, false", "1d, 23h, false", "3s, 2s, false", "5m, 30s, false"})
    void aPairFailingForNoLongerThanTheIntervalIsRefusedWithTheRemedy(String failingFor, String interval,
                                                                       boolean refused) {
        Map<String, Object> v = values("prometheusRule.enabled", true, "imex.channel.mode", "hostPath",
                "alerts.pairFailingFor", failingFor, "agent.meshInterval", interval);
        if (refused) {
            assertThatThrownBy(() -> Chart.render(v)).hasMessageContaining("alerts.pairFailingFor (" + failingFor
                    + ") must be longer than agent.meshInterval (" + interval + ")")
                    .hasMessageContaining("prometheusRule.disabled.ImexprobePairImportFailing");
            Map<String, Object> dropped = values("prometheusRule.enabled", true, "imex.channel.mode", "hostPath",
                    "alerts.pairFailingFor", failingFor, "agent.meshInterval", interval,
                    "prometheusRule.disabled", Map.of("ImexprobePairImportFailing", true));
            List<Map<String, Object>> rules = Chart.at(Chart.render(dropped).one("PrometheusRule"), "spec.groups.0.rules");
            assertThat(rules).as("the alert dropped, the rest renders").extracting(r -> r.get("alert"))
                    .doesNotContain("ImexprobePairImportFailing").contains("ImexprobePairImportIntermittent");
        } else {
            List<Map<String, Object>> rules = Chart.at(Chart.render(v).one("PrometheusRule"), "spec.groups.0.rules");
            assertThat(rules).filteredOn(r -> "ImexprobePairImportFailing".equals(r.get("alert")))
                    .singleElement().satisfies(r -> assertThat(r.get("for")).isEqualTo(failingFor));
        }
    }

    @Test
    void perGpuWithoutNodesIsRefusedWithAnAnswer() {
        assertThatThrownBy(() -> Chart.render(values("mode", "perGpu")))
                .hasMessageContaining("mode=perGpu needs perGpu.nodes");
        assertThatThrownBy(() -> Chart.render(values("mode", "perGpu", "perGpu.nodes", List.of("a", "a"))))
                .hasMessageContaining("perGpu.nodes lists a node twice");
    }

    @SuppressWarnings("unchecked")
    static String channelMode(Map<String, Object> values) {
        if (values.get("imex") instanceof Map<?, ?> imex && imex.get("channel") instanceof Map<?, ?> channel
                && channel.get("mode") instanceof String mode) {
            return mode;
        }
        return "computeDomain";
    }

    static List<PodTemplateSpec> podTemplates(Rendered r) {
        return Stream.concat(
                r.ofKind("DaemonSet").stream().map(d -> ((DaemonSet) KubernetesSchema.load(d)).getSpec().getTemplate()),
                r.ofKind("StatefulSet").stream().map(d -> ((StatefulSet) KubernetesSchema.load(d)).getSpec().getTemplate()))
                .toList();
    }

    static Map<String, EnvVar> env(Container c) {
        return c.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, Function.identity()));
    }

    private static void assertPort(NetworkPolicyPort p, int port, String protocol) {
        assertThat(p.getPort().getIntVal()).isEqualTo(port);
        assertThat(p.getProtocol()).isEqualTo(protocol);
    }

    /** Jackson conversion of opaque driver parameters to a map. */
    static final class Serialization {
        static Map<String, Object> convert(Object value) {
            return io.fabric8.kubernetes.client.utils.Serialization.jsonMapper().convertValue(value, Map.class);
        }
    }
}
