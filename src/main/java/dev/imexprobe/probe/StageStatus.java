package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

public enum StageStatus {
    OK, FAILED, SKIPPED, TIMEOUT;

    /** Kept, not made per call: every document and metric series carries it (docs/performance.md, 2026-12-05). */
    private final String label = name().toLowerCase(Locale.ROOT);

    @JsonValue
    public String label() {
        return label;
    }
}
