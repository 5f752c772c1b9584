package dev.imexprobe.cuda;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.finding.Severity;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

class ContextPolicyTest {

    private static GpuDevice gpu(int index, ComputeMode mode, Boolean mig) {
        return new GpuDevice(index, "GPU-0000000" + index + "-0000-0000-0000-000000000000", "NVIDIA H200", null,
                Map.of(), 2L << 20, null, NvmlReturn.SUCCESS, null, null).withModes(mode, mig);
    }

    @Test
    void defaultModeAndMigOffMayHoldAContext() {
        assertThat(ContextPolicy.DEFAULT.refusal(gpu(0, ComputeMode.DEFAULT, false))).isNull();
        assertThat(new ContextPolicy(true).refusal(gpu(0, ComputeMode.DEFAULT, false))).isNull();
    }

    @Test
    void modesNvmlCouldNotReadAreNoReasonToRefuse() {
        assertThat(ContextPolicy.DEFAULT.refusal(gpu(0, null, null))).isNull();
        assertThat(ContextPolicy.DEFAULT.refusal(null)).isNull();
    }

    @Test
    void exclusiveProcessIsRefusedByDefaultAndNamesTheOptIn() {
        int index = ThreadLocalRandom.current().nextInt(8);
        Finding f = ContextPolicy.DEFAULT.refusal(gpu(index, ComputeMode.EXCLUSIVE_PROCESS, false));
        assertThat(f).isNotNull();
        assertThat(f.is(FindingCode.COMPUTE_MODE_EXCLUSIVE_PROCESS)).isTrue();
        assertThat(f.severity()).isEqualTo(Severity.INFO);
        assertThat(f.evidence()).containsEntry("gpu", index).containsEntry("computeMode", "EXCLUSIVE_PROCESS");
        assertThat(f.cause()).contains("GPU " + index + " (GPU-0000000" + index);
        assertThat(f.remedy()).contains("imexprobe.driver.probe-exclusive-process=true")
                .contains("nvidia-smi -i GPU-0000000" + index);
        // the removed EXCLUSIVE_THREAD is as exclusive
        assertThat(ContextPolicy.DEFAULT.refusal(gpu(index, ComputeMode.EXCLUSIVE_THREAD, false)).code())
                .isEqualTo("COMPUTE_MODE_EXCLUSIVE_PROCESS");
    }

    @Test
    void theOptInAllowsExclusiveProcessOnly() {
        ContextPolicy optIn = new ContextPolicy(true);
        assertThat(optIn.refusal(gpu(1, ComputeMode.EXCLUSIVE_PROCESS, false))).isNull();
        assertThat(optIn.refusal(gpu(1, ComputeMode.PROHIBITED, false)).code()).isEqualTo("COMPUTE_MODE_PROHIBITED");
        assertThat(optIn.refusal(gpu(1, ComputeMode.DEFAULT, true)).code()).isEqualTo("MIG_ENABLED");
        assertThat(optIn.refusal(gpu(1, ComputeMode.EXCLUSIVE_PROCESS, true)).code()).isEqualTo("MIG_ENABLED");
    }

    @Test
    void prohibitedAndMigAreRefusedWithTheirOwnFindings() {
        Finding p = ContextPolicy.DEFAULT.refusal(gpu(2, ComputeMode.PROHIBITED, false));
        assertThat(p.code()).isEqualTo("COMPUTE_MODE_PROHIBITED");
        assertThat(p.severity()).isEqualTo(Severity.INFO);
        assertThat(p.remedy()).contains("does not apply");
        Finding m = ContextPolicy.DEFAULT.refusal(gpu(3, ComputeMode.DEFAULT, true));
        assertThat(m.code()).isEqualTo("MIG_ENABLED");
        assertThat(m.evidence()).containsEntry("migEnabled", true);
    }

    private static GpuDevice withAttributes(int index, Map<String, Object> attributes, ComputeMode mode, Boolean mig) {
        return new GpuDevice(index, "GPU-0000000" + index + "-0000-0000-0000-000000000000", "NVIDIA H200", null,
                attributes, 2L << 20, null, NvmlReturn.SUCCESS, null, null).withModes(mode, mig);
    }

    @Test
    void aGpuThatReadsNoFabricHandlesOrNoVmmIsRefusedWhateverItsModes() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 200; i++) {
            int index = r.nextInt(64);
            // a value the driver read, or the CUresult name it returned instead (GpuInventory's form)
            Object vmm = List.of(0, 1, "CUDA_ERROR_INVALID_VALUE").get(r.nextInt(3));
            Object fabric = List.of(0, 1, "CUDA_ERROR_INVALID_VALUE").get(r.nextInt(3));
            Map<String, Object> attributes = new HashMap<>();
            attributes.put(GpuDevice.attributeKey(DeviceAttribute.VIRTUAL_MEMORY_MANAGEMENT), vmm);
            attributes.put(GpuDevice.attributeKey(DeviceAttribute.FABRIC), fabric);
            ComputeMode mode = List.of(ComputeMode.DEFAULT, ComputeMode.PROHIBITED, ComputeMode.EXCLUSIVE_PROCESS)
                    .get(r.nextInt(3));
            boolean mig = r.nextBoolean();
            boolean optIn = r.nextBoolean();
            GpuDevice gpu = withAttributes(index, attributes, mode, mig);
            Finding f = new ContextPolicy(optIn).refusal(gpu);
            String modeCode = mig ? "MIG_ENABLED" : mode == ComputeMode.PROHIBITED ? "COMPUTE_MODE_PROHIBITED"
                    : mode == ComputeMode.EXCLUSIVE_PROCESS && !optIn ? "COMPUTE_MODE_EXCLUSIVE_PROCESS" : null;
            // only a 0 the driver read refuses: an attribute it could not read leaves the driver to decide
            String want = Integer.valueOf(0).equals(vmm) ? "VMM_UNSUPPORTED"
                    : Integer.valueOf(0).equals(fabric) ? "FABRIC_UNSUPPORTED" : modeCode;
            String context = "vmm=" + vmm + " fabric=" + fabric + " mode=" + mode + " mig=" + mig + " optIn=" + optIn;
            assertThat(f == null ? null : f.code()).as(context).isEqualTo(want);
            FindingCode code = ContextPolicy.noFabricMemory(gpu);
            assertThat(code == null ? null : code.name()).as(context)
                    .isEqualTo("VMM_UNSUPPORTED".equals(want) || "FABRIC_UNSUPPORTED".equals(want) ? want : null);
            if (code != null) {
                assertThat(f.severity()).isEqualTo(Severity.ERROR);
                assertThat(f.evidence()).containsEntry("gpu", index).containsEntry("uuid", gpu.uuid());
                assertThat(f.cause()).startsWith("GPU " + index + " (" + gpu.uuid() + ") reports ")
                        .contains("its pairs are not probed");
            }
        }
    }

    @Test
    void nvmlValuesMapToModes() {
        assertThat(ComputeMode.of(0)).isEqualTo(ComputeMode.DEFAULT);
        assertThat(ComputeMode.of(2)).isEqualTo(ComputeMode.PROHIBITED);
        assertThat(ComputeMode.of(3)).isEqualTo(ComputeMode.EXCLUSIVE_PROCESS);
        assertThat(ComputeMode.of(4)).isNull();
        assertThat(ComputeMode.of(-1)).isNull();
    }
}
