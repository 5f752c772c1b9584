package dev.imexprobe.probe;

import dev.imexprobe.cuda.GpuDevice;

import java.util.List;

/** What a prober needs to know about its own agent. */
public interface LocalAgent {

    String node();

    String agentId();

    List<GpuDevice> gpus();
}
