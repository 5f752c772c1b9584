package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

public enum Verdict {
    PASS, FAIL,
    /** Nothing ran: the agent creates no context on a GPU of the pair (compute mode, MIG). Never a failure. */
    NOT_PROBED;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Verdict of(boolean pass) {
        return pass ? PASS : FAIL;
    }
}
