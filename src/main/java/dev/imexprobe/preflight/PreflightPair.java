package dev.imexprobe.preflight;

import dev.imexprobe.probe.PairResult;

/**
 * One exchange of the preflight: {@code exporter}'s GPU exported, {@code importer}'s GPU imported, mapped,
 * verified and wrote back. Instances are named by their agent id; the result is the agent's own probe result.
 */
public record PreflightPair(String exporter, String importer, PairResult result) {

    public boolean passed() {
        return result.passed();
    }
}
