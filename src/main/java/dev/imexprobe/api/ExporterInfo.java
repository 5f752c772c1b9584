package dev.imexprobe.api;

/** Where an export lives: the exporting agent's node and GPU, and that GPU's fabric clique and cluster. */
public record ExporterInfo(String node, String agentId, String gpuUuid, int gpuIndex, Long cliqueId,
                           String clusterUuid) {
}
