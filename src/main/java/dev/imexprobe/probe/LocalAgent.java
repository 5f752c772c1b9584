package dev.imexprobe.probe;

import dev.imexprobe.cuda.GpuDevice;

import java.util.List;

/** What a prober needs to know about its own agent. */
public interface LocalAgent {

    String node();

    String agentId();

    List<GpuDevice> gpus();

    /**
     * Whether this process has the GPU with {@code uuid}, visible to CUDA or not (an importer's view of its exporter's
     * GPU): {@link GpuDevice#reached}; null when that cannot be told.
     */
    default Boolean reaches(String uuid) {
        return GpuDevice.holds(gpus(), uuid) ? Boolean.TRUE : null;
    }
}
