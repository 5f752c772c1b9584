package dev.imexprobe.finding;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/** Where the fault lies: this node, the exporter of a pair (source) or its importer (target). */
public enum Blame {
    LOCAL, SOURCE, TARGET;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
