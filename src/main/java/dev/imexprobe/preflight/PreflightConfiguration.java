package dev.imexprobe.preflight;

import dev.imexprobe.node.NodeService;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.PeerDiscovery;
import dev.imexprobe.peer.Prober;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

import tools.jackson.databind.json.JsonMapper;

/**
 * The preflight is the agent in the {@code preflight} profile: the same discovery, peer client, auth, stages and
 * findings; the mesh does not run, and {@link PreflightRun} drives one all-to-all exchange instead. Wiring only.
 */
@Configuration(proxyBeanMethods = false)
@Profile(PreflightConfiguration.PROFILE)
public class PreflightConfiguration {

    public static final String PROFILE = "preflight";

    @Bean
    PreflightState preflightState(NodeService node, @Value("${server.port:8080}") int port) {
        return new PreflightState(PreflightRun.describeSelf(node, port));
    }

    @Bean
    PreflightRun preflightRun(PreflightState state, PeerDiscovery discovery, Prober prober, PeerClient client,
                              NodeService node, JsonMapper json) {
        return new PreflightRun(state, discovery, prober, client, node, json);
    }
}
