package dev.imexprobe.mesh;

import com.fasterxml.jackson.annotation.JsonInclude;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.node.AgentIdentity;

import java.time.Instant;
import java.util.List;

/**
 * The /v1/mesh document: the pairs this agent took part in (or, with scope=domain, every agent's pairs merged)
 * and the mesh findings that blame a target or a source.
 *
 * @param agents the agents whose pairs are included (one, or all that answered with scope=domain)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MeshView(AgentIdentity agent, boolean fake, String scope, Instant generatedAt, double intervalSeconds,
                       Instant lastCycle, List<String> agents, List<String> unreachableAgents, List<PairState> pairs,
                       List<Finding> findings) {
}
