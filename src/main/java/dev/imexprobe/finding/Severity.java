package dev.imexprobe.finding;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

public enum Severity {
    ERROR, WARNING, INFO;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
