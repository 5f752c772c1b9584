package dev.imexprobe.node;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.testing.NodeReports;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether an importer has its exporter's GPU: CUDA's view, or NVML's past CUDA_VISIBLE_DEVICES; without NVML, CUDA's
 * "no" counts only where CUDA_VISIBLE_DEVICES is unset.
 */
class NodeReportReachesTest {

    @Test
    void aGpuIsReachedWhenCudaOrNvmlHasItAndUnknownWhereCudaVisibleDevicesMayHideIt() {
        Random random = new Random();
        long seed = random.nextLong();
        random.setSeed(seed);
        for (int round = 0; round < 200; round++) {
            List<String> all = new ArrayList<>();
            for (int i = 0; i < 1 + random.nextInt(8); i++) {
                all.add("GPU-" + new UUID(random.nextLong(), random.nextLong()));
            }
            List<GpuDevice> cuda = new ArrayList<>();
            List<String> nvml = new ArrayList<>();
            for (String u : all) {
                if (random.nextBoolean()) {
                    cuda.add(NodeReports.gpu(cuda.size(), u, null));
                }
                if (random.nextBoolean()) {
                    nvml.add(u);
                }
            }
            boolean nvmlKnown = random.nextInt(4) > 0;
            // CUDA_VISIBLE_DEVICES: unset, set, or a report that does not say
            int cvd = random.nextInt(3);
            VisibleDevices visible = cvd == 0 ? VisibleDevices.parse(null)
                    : cvd == 1 ? VisibleDevices.parse(cuda.isEmpty() ? "" : cuda.getFirst().uuid()) : null;
            NodeReport r = withNvml(cuda, nvmlKnown ? nvml : null, visible);
            for (String u : all) {
                boolean inCuda = cuda.stream().anyMatch(g -> g.uuid().equals(u));
                // Without NVML, CUDA's "no" is the device node's only when CUDA_VISIBLE_DEVICES hides nothing.
                Boolean expected = inCuda || (nvmlKnown && nvml.contains(u)) ? Boolean.TRUE
                        : nvmlKnown || cvd == 0 ? Boolean.FALSE : null;
                assertThat(r.reaches(u)).as("seed %d, %s: CUDA %s, NVML %s, CUDA_VISIBLE_DEVICES %s", seed, u, cuda,
                        nvmlKnown ? nvml : null, visible).isEqualTo(expected);
            }
            String stranger = "GPU-" + new UUID(random.nextLong(), random.nextLong());
            assertThat(r.reaches(stranger)).isEqualTo(nvmlKnown || cvd == 0 ? Boolean.FALSE : null);
        }
    }

    private static NodeReport withNvml(List<GpuDevice> gpus, List<String> nvmlGpus, VisibleDevices visible) {
        NodeReport.DriverView driver = new NodeReport.DriverView(true, "libcuda.so.1", null, true,
                "libnvidia-ml.so.1", null, "580.159.04", 13000, "13.0", "CUDA_SUCCESS", nvmlGpus);
        return new NodeReport(new AgentIdentity("agent-1", "node-a", "1.2.3"), false, driver, gpus, 1, null, null,
                null, null, visible, List.of(), Instant.parse("2026-12-01T10:00:00Z"));
    }
}
