package dev.imexprobe.agent;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.mesh.MeshScheduler;
import dev.imexprobe.mesh.MeshService;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.metrics.ConsistentScrape;
import dev.imexprobe.metrics.ImexprobeMetrics;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.peer.CompositeDiscovery;
import dev.imexprobe.peer.DnsPeers;
import dev.imexprobe.peer.KubernetesPeers;
import dev.imexprobe.peer.OwnEndpoints;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.PeerDiscovery;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.peer.StaticPeers;
import dev.imexprobe.probe.DriverExecutor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/** Wires discovery, the mesh, its metrics and health; no logic here. */
@Configuration(proxyBeanMethods = false)
public class MeshConfiguration {

    @Bean(destroyMethod = "")
    PeerDiscovery peerDiscovery(AgentProperties properties, @Value("${server.port:8080}") int serverPort,
                                ObjectProvider<KubernetesApi> kubernetesApi) {
        AgentProperties.Peers p = properties.peers();
        List<PeerDiscovery> sources = new ArrayList<>();
        if (!p.staticList().isEmpty()) {
            sources.add(new StaticPeers(String.join(",", p.staticList())));
        }
        if (p.dns() != null && !p.dns().isBlank()) {
            sources.add(new DnsPeers(p.dns()));
        }
        AgentProperties.Kubernetes k = p.kubernetes();
        if (k.selector() != null && !k.selector().isBlank()) {
            KubernetesPeers.Settings s = KubernetesPeers.Settings.inCluster(k.selector(), k.namespace())
                    .withAgentPort(k.port());
            // The API server, token, CA, timeout and retries: imexprobe.kubernetes.*, shared with the Node condition.
            sources.add(new KubernetesPeers(s, kubernetesApi.getObject(), Clock.systemUTC()));
        }
        return new CompositeDiscovery(sources, new OwnEndpoints(serverPort));
    }

    @Bean
    MeshState meshState() {
        return new MeshState(Clock.systemUTC());
    }

    @Bean
    ProbeRecorder probeRecorder(MeshState state, ImexprobeMetrics metrics) {
        ProbeRecorder recorder = new ProbeRecorder(state);
        recorder.addListener(metrics);
        return recorder;
    }

    @Bean(destroyMethod = "close")
    MeshScheduler meshScheduler(AgentProperties properties, PeerDiscovery discovery, Prober prober, NodeService node,
                                ProbeRecorder recorder, ImexprobeMetrics metrics,
                                @org.springframework.beans.factory.annotation.Value(
                                        "${imexprobe.channel.mode:hostPath}") String channelMode,
                                @org.springframework.beans.factory.annotation.Value(
                                        "${imexprobe.mesh.cross-domain-sample-interval:0s}")
                                java.time.Duration crossDomainSampleInterval) {
        AgentProperties.Mesh m = properties.mesh();
        // A size no local GPU can allocate would fail every pair as the node's DRIVER_ERROR and alert on all of them:
        // a setting's error, so the agent stops before it serves, as for any other. Only a set size reads the node
        // report this early (the GPUs' granularity; no context).
        String why = m.size() == null ? null : GpuDevice.sizeRefusal(node.report().gpus(), m.size());
        if (why != null) {
            throw new IllegalArgumentException("imexprobe.mesh.size (IMEXPROBE_MESH_SIZE): " + why
                    + "; leave it unset for the granularity of each GPU");
        }
        return new MeshScheduler(new MeshScheduler.Settings(m.interval(), m.jitter(), m.subset(), m.concurrency(),
                m.maxbackoff(), m.size(), true), discovery, prober, node, () -> {
                    node.refresh();
                    metrics.refreshGauges();
                }, recorder).observer(ChannelMode.observer(channelMode))
                .crossDomainSample(new dev.imexprobe.mesh.CrossDomainSample(crossDomainSampleInterval,
                        m.interval(), System::nanoTime));
    }

    /**
     * The mesh starts once the agent serves requests: peers probing us must find us ready. A preflight process
     * (profile preflight) runs one exchange of its own instead.
     */
    @Bean
    @Profile("!preflight")
    ApplicationListener<ApplicationReadyEvent> meshStarter(MeshScheduler scheduler) {
        return event -> scheduler.start();
    }

    @Bean
    ImexprobeMetrics imexprobeMetrics(NodeService node, MeshState state, PeerDiscovery discovery,
                                      AgentProperties properties, AgentIdentity identity, DriverExecutor executor,
                                      dev.imexprobe.cuda.CudaDriver driver) {
        ImexprobeMetrics metrics = new ImexprobeMetrics(node::report, state, state::peersKnown, executor::stuck,
                properties.metrics().pairs(), identity.version());
        return driver instanceof dev.imexprobe.cuda.JniCudaDriver jni ? metrics.contexts(jni.contexts()) : metrics;
    }

    @Bean
    ConsistentScrape consistentScrape(ImexprobeMetrics metrics) {
        return new ConsistentScrape(metrics);
    }

    @Bean
    MeshService meshService(AgentIdentity identity, NodeService node, MeshState state, PeerDiscovery discovery,
                            PeerClient client, JsonMapper json, AgentProperties properties) {
        return new MeshService(identity, () -> node.report().fake(), state, discovery, client, json,
                properties.mesh().interval()).computeDomains(() -> node.report().computeDomains());
    }

    @Bean("imexprobe")
    ReadinessHealth readinessHealth(NodeService node) {
        return new ReadinessHealth(node);
    }

    @Bean("driver")
    DriverHealth driverHealth(DriverExecutor executor) {
        return new DriverHealth(executor);
    }

    @Bean("mesh")
    MeshHealth meshHealth(MeshState state) {
        return new MeshHealth(state);
    }
}
