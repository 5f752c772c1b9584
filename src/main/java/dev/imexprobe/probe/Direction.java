package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/** push: this agent exports and the target imports. pull: the target exports and this agent imports. */
public enum Direction {
    PUSH, PULL;

    /** Kept, not made per call: every document and metric series carries it (docs/performance.md, 2026-12-05). */
    private final String label = name().toLowerCase(Locale.ROOT);

    @JsonValue
    public String label() {
        return label;
    }
}
