package dev.imexprobe.agent;

import dev.imexprobe.condition.NodeConditionService;
import dev.imexprobe.condition.NodeConditionWriter;
import dev.imexprobe.condition.NodeEvents;
import dev.imexprobe.condition.NodeJudge;
import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.metrics.ImexprobeMetrics;
import dev.imexprobe.node.NodeService;

import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Profile;

import java.time.Clock;

/** Wires the one Kubernetes API client and, when enabled, the Node condition; no logic here. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({KubernetesProperties.class, NodeConditionProperties.class})
public class KubernetesConfiguration {

    /** Created on first use: by pod discovery (a selector is set) or the Node condition (enabled). */
    @Bean(destroyMethod = "close")
    @Lazy
    KubernetesApi kubernetesApi(KubernetesProperties kubernetes, AgentProperties properties) {
        return new KubernetesApi(kubernetes.settings(properties.peers().kubernetes().api()));
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = "imexprobe.node-condition.enabled", havingValue = "true")
    NodeConditionService nodeConditionService(NodeConditionProperties p, AgentProperties properties,
                                              KubernetesApi api, MeshState state, ImexprobeMetrics metrics,
                                              NodeService nodeService,
                                              @org.springframework.beans.factory.annotation.Value(
                                                      "${imexprobe.channel.mode:hostPath}") String channelMode) {
        String node = properties.node().name();
        if (node == null || node.isBlank()) {
            throw new IllegalArgumentException("imexprobe.node-condition.enabled is true but IMEXPROBE_NODE_NAME "
                    + "(imexprobe.node.name) is unset: set it from spec.nodeName through the downward API, or "
                    + "turn the Node condition off");
        }
        String pod = System.getenv("HOSTNAME");
        Clock clock = Clock.systemUTC();
        NodeEvents events = new NodeEvents(api, node, p.eventNamespace(), pod != null && !pod.isBlank() ? pod : node,
                p.eventBurst(), p.eventRefill(), clock);
        NodeConditionWriter writer = new NodeConditionWriter(api, node, p.heartbeat(), events,
                metrics::nodeConditionWrite, clock);
        boolean observer = ChannelMode.observer(channelMode);
        return new NodeConditionService(new NodeJudge(node, p.rounds()), state::snapshot, state::lastCycle,
                () -> observer, () -> !p.channelExpected() && nodeService.report().usableChannels() == 0, writer,
                p.interval() != null ? p.interval() : properties.mesh().interval());
    }

    @Bean
    @Profile("!preflight")
    @ConditionalOnProperty(name = "imexprobe.node-condition.enabled", havingValue = "true")
    ApplicationListener<ApplicationReadyEvent> nodeConditionStarter(NodeConditionService service,
                                                                    NodeConditionProperties p) {
        String pod = System.getenv("HOSTNAME");
        return event -> {
            if (p.writesFrom(pod)) {
                service.start();
            } else {
                LoggerFactory.getLogger(KubernetesConfiguration.class).info("pod {} leaves the node condition to "
                        + "the pod with ordinal {} on this node (imexprobe.node-condition.ordinal)", pod, p.ordinal());
            }
        };
    }
}
