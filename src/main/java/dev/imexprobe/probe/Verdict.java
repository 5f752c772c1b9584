package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

public enum Verdict {
    PASS, FAIL;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Verdict of(boolean pass) {
        return pass ? PASS : FAIL;
    }
}
