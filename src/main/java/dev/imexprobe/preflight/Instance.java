package dev.imexprobe.preflight;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/**
 * One preflight process of the job.
 *
 * @param id      the agent id (random per process)
 * @param name    what a human recognises: the pod's hostname and the port it listens on
 * @param node    the node name (IMEXPROBE_NODE_NAME: set it from spec.nodeName, else same-node pairs look cross-node)
 * @param address how the others reach it (host:port from discovery); null for the instance describing itself
 * @param gpus    the UUIDs of the GPUs it sees
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Instance(String id, String name, String node, String address, List<String> gpus) {

    Instance withAddress(String newAddress) {
        return new Instance(id, name, node, newAddress, gpus);
    }
}
