package dev.imexprobe.probe;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Asked before any driver work on a local GPU: why no context may be created there (compute mode, MIG, no fabric
 * memory, decided by cuda/ContextPolicy; a job's memory filling the GPU, by cuda/MemoryHeadroom; both from the
 * node's report), or null. A refused exchange runs no stage and is "not probed".
 */
@FunctionalInterface
public interface ContextGuard {

    ContextGuard NONE = gpu -> null;

    Finding refusal(int gpu);

    /** The stages of a refused exchange: each reported, none run. */
    static List<StageResult> skipped(List<Stage> stages, Finding why) {
        String detail = "not run: no context is created on this GPU (" + why.code() + ")";
        return stages.stream().map(s -> StageResult.skipped(s, detail)).toList();
    }

    /**
     * A GPU's refusal ({@link #of}, "local" on its node) as a pair reports it: blaming the side whose agent refused,
     * source or target, so a preflight that cannot pass blames the instance whose GPU refused, whichever way the pair
     * runs. The caller names the side: two agents may share one GPU, so its UUID cannot tell which of them refused.
     * Any other finding comes back as it is.
     */
    static Finding inPair(Finding why, Blame refusingSide) {
        return why == null || why.blame() != Blame.LOCAL ? why : why.withBlame(refusingSide, null);
    }

    /**
     * The finding a GPU's agent gave for creating no context on it ({@code notProbed} in its /v1/node), with the
     * GPU as evidence; null for none or a code this agent does not know.
     */
    static Finding of(GpuSelector.Gpu gpu) {
        if (gpu == null || gpu.notProbed() == null) {
            return null;
        }
        FindingCode code;
        try {
            code = FindingCode.valueOf(gpu.notProbed());
        } catch (IllegalArgumentException e) {
            return null; // a code this agent does not know: the peer's own answer will say
        }
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("gpu", gpu.index());
        e.put("uuid", gpu.uuid());
        return code.finding(e);
    }
}
