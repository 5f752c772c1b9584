package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

public enum Verdict {
    PASS, FAIL,
    /**
     * Nothing ran: the agent creates no context on a GPU of the pair (compute mode, MIG, no fabric memory). Never a
     * failure.
     */
    NOT_PROBED;

    /** Kept, not made per call: every document and metric series carries it (docs/performance.md, 2026-12-05). */
    private final String label = name().toLowerCase(Locale.ROOT);

    @JsonValue
    public String label() {
        return label;
    }

    public static Verdict of(boolean pass) {
        return pass ? PASS : FAIL;
    }
}
