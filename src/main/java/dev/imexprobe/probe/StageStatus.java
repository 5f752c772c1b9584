package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

public enum StageStatus {
    OK, FAILED, SKIPPED, TIMEOUT;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
