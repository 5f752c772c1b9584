package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/** push: this agent exports and the target imports. pull: the target exports and this agent imports. */
public enum Direction {
    PUSH, PULL;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
