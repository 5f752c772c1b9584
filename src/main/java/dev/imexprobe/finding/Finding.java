package dev.imexprobe.finding;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Map;

/**
 * A diagnosis: which catalogue entry, how bad, who is at fault, why, what to do, and the evidence it rests
 * on (values the user can check). Built only through {@link FindingCode#finding}.
 */
@JsonPropertyOrder({"code", "severity", "blame", "cause", "remedy", "evidence"})
public record Finding(String code, Severity severity, Blame blame, String cause, String remedy,
                      Map<String, Object> evidence) {

    /** Whether this finding is that catalogue entry: findings are compared by entry, never by the code's text. */
    public boolean is(FindingCode entry) {
        return code.equals(entry.name());
    }

    public FindingCode catalogueEntry() {
        return FindingCode.valueOf(code);
    }

    public Finding withBlame(Blame newBlame, String addedCause) {
        return new Finding(code, severity, newBlame, addedCause == null ? cause : cause + " " + addedCause, remedy,
                evidence);
    }
}
