package dev.imexprobe.peer;

import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/** Reading /probe and /v1/imports documents in assertions. */
final class ProbeJson {

    /** Every stage, in the order every document lists them. */
    static final List<String> STAGES = List.of("create", "export", "transfer", "import", "reserve", "map", "access",
            "verify", "writeback", "release");

    private ProbeJson() {
    }

    static JsonNode stage(JsonNode result, String name) {
        for (JsonNode s : result.get("stages")) {
            if (s.get("name").asString().equals(name)) {
                return s;
            }
        }
        throw new AssertionError("no stage " + name + " in " + result);
    }

    static List<String> names(JsonNode result) {
        List<String> out = new ArrayList<>();
        result.get("stages").forEach(s -> out.add(s.get("name").asString()));
        return out;
    }

    /** The first stage that failed or timed out, or null. */
    static JsonNode firstFailure(JsonNode result) {
        for (JsonNode s : result.get("stages")) {
            String status = s.get("status").asString();
            if (status.equals("failed") || status.equals("timeout")) {
                return s;
            }
        }
        return null;
    }

    static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : v.asString();
    }
}
