package dev.imexprobe.preflight;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.List;
import java.util.Locale;

/**
 * GET /v1/preflight: who this instance is, how far it got, and once it is done the pairs it imported. The others
 * read it to count the instances, to gather the whole matrix, and to know when nobody needs this one any more.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PreflightStatus(Instance instance, Phase phase, List<PreflightPair> pairs) {

    public enum Phase {
        /** waiting for the others; serving exports already */
        GATHERING,
        /** importing from every other instance */
        PROBING,
        /** its imports are done ({@code pairs} set); still serving exports */
        DONE,
        /** it has every other instance's results: it needs nobody any more */
        COLLECTED;

        @JsonValue
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        boolean done() {
            return this == DONE || this == COLLECTED;
        }
    }
}
