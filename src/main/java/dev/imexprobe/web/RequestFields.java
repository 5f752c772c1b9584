package dev.imexprobe.web;

import dev.imexprobe.json.Json;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

import java.util.Iterator;
import java.util.Set;

/**
 * Reads a request body field by field with messages that say what is wrong and what is expected. Everything
 * is checked here, before any driver call; unknown fields are refused so a typo never passes silently.
 */
final class RequestFields {

    static final int MAX_BODY = 16 * 1024;

    private final JsonNode node;

    private RequestFields(JsonNode node) {
        this.node = node;
    }

    static RequestFields parse(byte[] body, Set<String> known) {
        if (body == null || body.length == 0) {
            return new RequestFields(Json.MAPPER.createObjectNode());
        }
        if (body.length > MAX_BODY) {
            throw ApiException.invalid("request body of " + body.length + " bytes is larger than " + MAX_BODY);
        }
        JsonNode n;
        try {
            n = Json.MAPPER.readTree(body);
        } catch (JacksonException e) {
            throw ApiException.invalid("request body is not valid JSON: " + e.getOriginalMessage());
        }
        if (n == null || !n.isObject()) {
            throw ApiException.invalid("request body must be a JSON object");
        }
        for (Iterator<String> it = n.propertyNames().iterator(); it.hasNext(); ) {
            String name = it.next();
            if (!known.contains(name)) {
                throw ApiException.invalid("unknown field '" + truncate(name) + "' (known: " + String.join(", ",
                        known.stream().sorted().toList()) + ")");
            }
        }
        return new RequestFields(n);
    }

    String text(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isString()) {
            throw ApiException.invalid(field + " must be a string");
        }
        return v.asString();
    }

    String requiredText(String field, String hint) {
        String v = text(field);
        if (v == null || v.isBlank()) {
            throw ApiException.invalid(field + " is required: " + hint);
        }
        return v;
    }

    /** A whole number given as a JSON number or a decimal string (64-bit values do not survive JavaScript). */
    Long wholeNumber(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            return v.longValue();
        }
        if (v.isString()) {
            try {
                return Long.parseLong(v.asString().trim());
            } catch (NumberFormatException e) {
                // fall through to the message below
            }
        }
        throw ApiException.invalid(field + " must be a whole number within 64 bits (a JSON number or a decimal string)");
    }

    /** A GPU given by index (number or digits) or by UUID ("GPU-…"); null when absent. */
    String gpu(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isIntegralNumber() && v.canConvertToInt()) {
            return Integer.toString(v.intValue());
        }
        if (v.isString() && !v.asString().isBlank()) {
            return v.asString().trim();
        }
        throw ApiException.invalid(field + " must be a GPU index or UUID");
    }

    static String truncate(String s) {
        return s.length() > 64 ? s.substring(0, 64) + "…" : s;
    }
}
