package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The manifests under examples/ that users copy: each document against the Kubernetes schema (custom resources
 * against their CRDs' fields), as the chart's, and each job wired for the preflight the way docs/preflight.md says.
 */
class ExamplesTest {

    static final Path EXAMPLES = Path.of("examples");

    static List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(EXAMPLES)) {
            return s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
    }

    static Chart.Rendered read(Path file) throws IOException {
        return Chart.Rendered.parse(Files.readString(file));
    }

    @Test
    void bothExamplesExist() throws IOException {
        assertThat(files()).extracting(p -> p.getFileName().toString())
                .contains("same-node-preflight.yaml", "multi-node-preflight.yaml");
    }

    @Test
    void everyDocumentMatchesItsSchema() throws IOException {
        for (Path file : files()) {
            for (Map<String, Object> doc : read(file).documents()) {
                if (KubernetesSchema.CUSTOM.contains(KubernetesSchema.typeKey(doc))) {
                    CustomResources.check(doc);
                } else {
                    KubernetesSchema.load(doc);
                }
            }
        }
    }

    @Test
    void eachJobRunsThePreflightFirstWithItsOwnCountAndAHeadlessServiceThatListsUnreadyPods() throws IOException {
        for (Path file : files()) {
            Chart.Rendered r = read(file);
            Job job = (Job) KubernetesSchema.load(r.one("Job"));
            Service service = (Service) KubernetesSchema.load(r.one("Service"));
            PodSpec pod = job.getSpec().getTemplate().getSpec();
            assertThat(pod.getInitContainers()).as(file.toString()).hasSize(1);
            Container preflight = pod.getInitContainers().getFirst();
            List<String> args = preflight.getArgs();
            assertThat(args.getFirst()).isEqualTo("preflight");
            int expect = Integer.parseInt(args.get(args.indexOf("--expect") + 1));
            assertThat(expect).as("--expect is the job's pod count").isEqualTo(job.getSpec().getParallelism())
                    .isEqualTo(job.getSpec().getCompletions());

            assertThat(service.getSpec().getClusterIP()).isEqualTo("None");
            assertThat(service.getSpec().getPublishNotReadyAddresses()).as("init containers run before readiness").isTrue();
            assertThat(service.getSpec().getSelector()).isEqualTo(job.getSpec().getTemplate().getMetadata().getLabels());
            int port = service.getSpec().getPorts().getFirst().getPort();
            assertThat(env(preflight, "IMEXPROBE_PEERS_DNS").getValue())
                    .isEqualTo(service.getMetadata().getName() + ":" + port);
            assertThat(env(preflight, "SERVER_PORT").getValue()).isEqualTo(Integer.toString(port));
            assertThat(env(preflight, "IMEXPROBE_NODE_NAME").getValueFrom().getFieldRef().getFieldPath())
                    .isEqualTo("spec.nodeName");
            assertThat(env(preflight, "IMEXPROBE_AUTH_TOKEN").getValueFrom().getSecretKeyRef()).isNotNull();

            // The preflight must hold what the job's containers hold: the same channel claim and GPUs.
            for (Container c : pod.getContainers()) {
                assertThat(preflight.getResources().getClaims()).as("%s: claims of %s", file, c.getName())
                        .containsExactlyInAnyOrderElementsOf(c.getResources().getClaims());
                assertThat(preflight.getResources().getLimits()).isEqualTo(c.getResources().getLimits());
            }
            assertThat(pod.getResourceClaims()).anySatisfy(c -> assertThat(c.getName()).isEqualTo("imex-channel"));
        }
    }

    @Test
    void theSameNodeExampleSharesOneChannelClaimAndGivesEachPodOneGpu() throws IOException {
        Chart.Rendered r = read(EXAMPLES.resolve("same-node-preflight.yaml"));
        Job job = (Job) KubernetesSchema.load(r.one("Job"));
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        assertThat(pod.getResourceClaims()).anySatisfy(c -> {
            assertThat(c.getName()).isEqualTo("imex-channel");
            assertThat(c.getResourceClaimName()).as("one claim shared by both pods")
                    .isEqualTo(Chart.<String>at(r.one("ResourceClaim"), "metadata.name"));
        });
        assertThat(Chart.<Integer>at(r.one("ResourceClaimTemplate"), "spec.spec.devices.requests.0.exactly.count"))
                .isEqualTo(1);
    }

    private static EnvVar env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + " has no " + name));
    }
}
