package dev.imexprobe.node;

import dev.imexprobe.json.Json;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * Parses {@code nvidia-imex-ctl -N -j} tolerantly: fields it does not know are ignored, missing ones are null, and
 * output that is not a JSON object with a {@code status} or {@code nodes} member is kept raw as UNPARSED.
 */
final class ImexDomainParser {

    /** Raw text kept for an unparsed answer; the whole domain's JSON is far smaller. */
    static final int RAW_CAP = 16 * 1024;

    private ImexDomainParser() {
    }

    static ImexDomain parse(String output) {
        String text = output == null ? "" : output.strip();
        if (text.isEmpty()) {
            return unparsed(text, "nvidia-imex-ctl -N -j printed nothing");
        }
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(text);
        } catch (JacksonException e) {
            return unparsed(text, "not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            return unparsed(text, "not a JSON object");
        }
        JsonNode nodes = root.get("nodes");
        String status = scalar(root, "status");
        if (status == null && (nodes == null || !nodes.isObject())) {
            return unparsed(text, "a JSON object without \"status\" or \"nodes\": unknown shape");
        }
        return new ImexDomain(ImexDomain.Parse.PARSED, status, scalar(root, "timestamp"), nodes(nodes), null, null);
    }

    private static List<ImexDomain.Node> nodes(JsonNode nodes) {
        List<ImexDomain.Node> result = new ArrayList<>();
        if (nodes == null || !nodes.isObject()) {
            return result;
        }
        for (Map.Entry<String, JsonNode> e : nodes.properties()) {
            JsonNode n = e.getValue();
            if (!n.isObject()) {
                continue; // one malformed member must not hide the others
            }
            result.add(new ImexDomain.Node(e.getKey(), scalar(n, "status"), scalar(n, "host"),
                    scalar(n, "hostName"), scalar(n, "version"), connections(n.get("connections"))));
        }
        result.sort((a, b) -> NaturalOrder.INSTANCE.compare(a.id(), b.id()));
        return result;
    }

    private static List<ImexDomain.Connection> connections(JsonNode connections) {
        List<ImexDomain.Connection> result = new ArrayList<>();
        if (connections == null || !connections.isObject()) {
            return result;
        }
        for (Map.Entry<String, JsonNode> e : connections.properties()) {
            JsonNode c = e.getValue();
            if (c.isObject()) {
                result.add(new ImexDomain.Connection(e.getKey(), scalar(c, "host"), scalar(c, "status")));
            }
        }
        result.sort((a, b) -> NaturalOrder.INSTANCE.compare(a.id(), b.id()));
        return result;
    }

    /** A scalar member as text (numbers too), null when absent, null or structured. */
    private static String scalar(JsonNode parent, String field) {
        JsonNode v = parent.get(field);
        return v == null || v.isNull() || !v.isValueNode() ? null : v.asString();
    }

    private static ImexDomain unparsed(String text, String why) {
        String raw = text.length() > RAW_CAP ? text.substring(0, RAW_CAP) : text;
        return new ImexDomain(ImexDomain.Parse.UNPARSED, null, null, List.of(), raw, why);
    }
}
