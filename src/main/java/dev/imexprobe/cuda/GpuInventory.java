package dev.imexprobe.cuda;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the driver says about this process's GPUs: versions and one {@link GpuDevice} per visible ordinal.
 *
 * @param init              the result of cuInit (NO_DEVICE when CUDA_VISIBLE_DEVICES hides every GPU)
 * @param cudaDriverVersion cuDriverGetVersion, e.g. 13000; 0 when unknown
 * @param driverVersion     NVML's driver version, e.g. "580.159.04"; null when NVML is unavailable
 * @param nvmlGpus          the UUIDs of the GPUs NVML reaches ({@link CudaDriver#nvmlGpuUuids}), CUDA_VISIBLE_DEVICES
 *                          or not; null when NVML could not say
 */
public record GpuInventory(CuResult init, int cudaDriverVersion, String driverVersion, List<GpuDevice> gpus,
                           List<String> nvmlGpus) {

    public GpuInventory(CuResult init, int cudaDriverVersion, String driverVersion, List<GpuDevice> gpus) {
        this(init, cudaDriverVersion, driverVersion, gpus, null);
    }

    static final Set<HandleType> FABRIC_ONLY = EnumSet.of(HandleType.FABRIC);

    public static GpuInventory scan(CudaDriver driver) {
        if (!driver.status().cudaLoaded()) {
            return new GpuInventory(CuResult.NOT_INITIALIZED, 0, null, List.of());
        }
        CuResult init = driver.init();
        CuCall<Integer> version = driver.driverVersion();
        NvmlCall<String> nvmlVersion = driver.nvmlDriverVersion();
        String driverVersion = nvmlVersion.ok() ? nvmlVersion.value() : null;
        NvmlCall<List<String>> nvml = driver.nvmlGpuUuids(); // also when CUDA_VISIBLE_DEVICES hides every GPU
        List<String> nvmlGpus = nvml.ok() ? nvml.value() : null;
        int cudaVersion = version.ok() ? version.value() : 0;
        if (!init.ok()) {
            return new GpuInventory(init, cudaVersion, driverVersion, List.of(), nvmlGpus);
        }
        CuCall<Integer> count = driver.deviceCount();
        List<GpuDevice> gpus = new ArrayList<>();
        for (int i = 0; count.ok() && i < count.value(); i++) {
            gpus.add(describe(driver, i));
        }
        return new GpuInventory(count.ok() ? init : count.result(), cudaVersion, driverVersion, List.copyOf(gpus),
                nvmlGpus);
    }

    private static GpuDevice describe(CudaDriver driver, int ordinal) {
        CuCall<String> uuid = driver.deviceUuid(ordinal);
        CuCall<String> name = driver.deviceName(ordinal);
        CuCall<String> bus = driver.pciBusId(ordinal);
        Map<String, Object> attributes = new LinkedHashMap<>();
        for (DeviceAttribute a : DeviceAttribute.values()) {
            CuCall<Integer> v = driver.attribute(ordinal, a);
            attributes.put(GpuDevice.attributeKey(a), v.ok() ? v.value() : v.result().name());
        }
        long granularity = 0;
        if (Integer.valueOf(1).equals(attributes.get(GpuDevice.attributeKey(DeviceAttribute.FABRIC)))) {
            CuCall<Long> g = driver.granularity(ordinal, FABRIC_ONLY);
            granularity = g.ok() ? g.value() : 0;
        }
        FabricInfo fabric = null;
        NvmlReturn fabricResult = NvmlReturn.NOT_SUPPORTED;
        ComputeMode computeMode = null;
        Boolean mig = null;
        if (uuid.ok()) {
            NvmlCall<FabricInfo> f = driver.fabricInfo(uuid.value());
            fabric = f.value();
            fabricResult = f.result();
            NvmlCall<Integer> mode = driver.computeMode(uuid.value());
            computeMode = mode.ok() ? ComputeMode.of(mode.value()) : null;
            NvmlCall<int[]> m = driver.migMode(uuid.value());
            // NOT_SUPPORTED: a GPU without MIG (nvml.h), so MIG is off
            mig = m.ok() ? Boolean.valueOf(m.value()[0] == 1) : m.result().equals(NvmlReturn.NOT_SUPPORTED) ? Boolean.FALSE : null;
        }
        CuCall<long[]> memory = driver.memoryInfo(ordinal);
        return new GpuDevice(ordinal, uuid.ok() ? uuid.value() : null, name.ok() ? name.value() : null,
                bus.ok() ? bus.value() : null, Collections.unmodifiableMap(attributes), granularity, fabric, fabricResult,
                memory.ok() ? memory.value()[0] : null, memory.ok() ? memory.value()[1] : null)
                .withModes(computeMode, mig);
    }

    /** "13.0" from 13000. */
    public String cudaVersion() {
        return cudaDriverVersion <= 0 ? null : (cudaDriverVersion / 1000) + "." + (cudaDriverVersion % 1000) / 10;
    }

    public GpuDevice gpu(int ordinal) {
        return gpus.stream().filter(g -> g.index() == ordinal).findFirst().orElse(null);
    }
}
