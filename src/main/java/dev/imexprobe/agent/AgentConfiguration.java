package dev.imexprobe.agent;

import dev.imexprobe.cuda.ContextPolicy;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.JniCudaDriver;
import dev.imexprobe.kubernetes.ComputeDomains;
import dev.imexprobe.kubernetes.NodeCliqueLabel;
import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.NodeInspectorSettings;
import dev.imexprobe.node.NodeReporter;
import dev.imexprobe.node.NodeService;
import dev.imexprobe.peer.AgentSignature;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.Prober;
import dev.imexprobe.peer.RequestSigner;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.ExportLimits;
import dev.imexprobe.probe.ExportRegistry;
import dev.imexprobe.probe.Importer;
import dev.imexprobe.probe.StageEngine;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;
import java.time.Duration;

/** Wires the agent's parts (and says once at the start what a missing token means); no other logic here. */
@Configuration(proxyBeanMethods = false)
public class AgentConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(AgentConfiguration.class);

    @Bean
    CudaDriver cudaDriver(AgentProperties properties) {
        JniCudaDriver driver = JniCudaDriver.get();
        driver.contexts().linger(properties.driver().contextLinger());
        return driver;
    }

    @Bean
    AgentIdentity agentIdentity(AgentProperties properties) {
        return AgentIdentity.create(properties.node().name());
    }

    @Bean
    NodeService nodeService(CudaDriver driver, AgentIdentity identity, DriverExecutor executor,
                            AgentProperties properties,
                            @org.springframework.beans.factory.annotation.Value("${imexprobe.channel.mode:hostPath}")
                            String channelMode,
                            @org.springframework.beans.factory.annotation.Value("${imexprobe.node.fabric-stuck-after:5m}")
                            java.time.Duration fabricStuckAfter,
                            @org.springframework.beans.factory.annotation.Value(
                                    "${imexprobe.computedomains.enabled:false}") boolean computeDomains,
                            @org.springframework.beans.factory.annotation.Value(
                                    "${imexprobe.computedomains.interval:60s}") Duration computeDomainsInterval,
                            @org.springframework.beans.factory.annotation.Value(
                                    "${imexprobe.cliquelabel.enabled:false}") boolean cliqueLabel,
                            @org.springframework.beans.factory.annotation.Value(
                                    "${imexprobe.cliquelabel.interval:60s}") Duration cliqueLabelInterval,
                            org.springframework.beans.factory.ObjectProvider<KubernetesApi> api) {
        NodeReporter reporter = new NodeReporter(driver, NodeInspectorSettings.defaults(), identity)
                .channelMode(channelMode, ChannelMode.observer(channelMode))
                .policy(new ContextPolicy(properties.driver().probeExclusiveProcess()))
                .headroom(new dev.imexprobe.cuda.MemoryHeadroom(properties.driver().minFreeMemory().toBytes()))
                .joinClock(new dev.imexprobe.node.FabricJoinClock(fabricStuckAfter, java.time.Clock.systemUTC()));
        if (computeDomains) {
            if (computeDomainsInterval.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("imexprobe.computedomains.interval must be at least 1s (every "
                        + "agent lists them), got " + computeDomainsInterval);
            }
            reporter.computeDomains(new ComputeDomains(api.getObject(), identity.node(), computeDomainsInterval,
                    Clock.systemUTC()));
        }
        if (cliqueLabel) {
            if (cliqueLabelInterval.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("imexprobe.cliquelabel.interval must be at least 1s (every agent "
                        + "reads its Node), got " + cliqueLabelInterval);
            }
            if (properties.node().name() == null || properties.node().name().isBlank()) {
                throw new IllegalArgumentException("imexprobe.cliquelabel.enabled is true but IMEXPROBE_NODE_NAME "
                        + "(imexprobe.node.name) is unset: set it from spec.nodeName through the downward API, or "
                        + "turn the clique label off");
            }
            reporter.cliqueLabel(new NodeCliqueLabel(api.getObject(), identity.node(), cliqueLabelInterval,
                    Clock.systemUTC()));
        }
        return new NodeService(reporter, executor);
    }

    @Bean(destroyMethod = "close")
    DriverExecutor driverExecutor(AgentProperties properties) {
        return new DriverExecutor(properties.driver().threads(), properties.driver().timeout(),
                properties.driver().spin());
    }

    @Bean
    StageEngine stageEngine(DriverExecutor executor) {
        return new StageEngine(executor);
    }

    @Bean
    ExportLimits exportLimits(AgentProperties properties) {
        AgentProperties.Exports e = properties.exports();
        return new ExportLimits(e.ttl(), e.max(), e.maxbytes(), e.totalbytes());
    }

    @Bean(destroyMethod = "close")
    ExportRegistry exportRegistry(CudaDriver driver, StageEngine engine, ExportLimits limits, NodeService node) {
        return new ExportRegistry(driver, engine, limits, Clock.systemUTC(), node);
    }

    @Bean
    Importer importer(CudaDriver driver, StageEngine engine, NodeService node) {
        return new Importer(driver, engine, node);
    }

    /** Null when no token is configured: then agent-to-agent endpoints refuse everyone (or, if not required, no one). */
    @Bean
    AgentSignatureHolder agentSignature(AgentProperties properties) {
        String token = properties.auth().token();
        if (token == null) {
            // Said once at the start: otherwise the first sign is every pair failing (NO_AUTH_TOKEN on this agent,
            // PEER_REJECTED on the peers that probe it).
            LOG.warn("imexprobe.auth.token (IMEXPROBE_AUTH_TOKEN) is not set: peers that require a token refuse this "
                    + "agent's probes (finding NO_AUTH_TOKEN), and this agent {}; give every agent the same token of at "
                    + "least 16 characters (the chart's Secret does)", properties.auth().required()
                    ? "refuses every peer's exports and imports (401)"
                    : "takes exports and imports from anyone (imexprobe.auth.required=false)");
        }
        return new AgentSignatureHolder(token == null ? null : new AgentSignature(token, Clock.systemUTC()));
    }

    @Bean
    RequestSigner requestSigner(AgentSignatureHolder signature) {
        AgentSignature s = signature.signature();
        return s == null ? (method, path, body) -> null : s::sign;
    }

    /** The optional signature as a bean (Spring does not hold nulls). */
    public record AgentSignatureHolder(AgentSignature signature) {
    }

    @Bean
    PeerClient peerClient(AgentProperties properties, JsonMapper json, RequestSigner signer) {
        Duration timeout = properties.probe().timeout();
        return new PeerClient(PeerClient.defaultHttp(timeout), json, signer);
    }

    @Bean
    Prober prober(NodeService node, ExportRegistry registry, Importer importer, PeerClient client) {
        return new Prober(node, registry, importer, client);
    }
}
