package dev.imexprobe.web;

import tools.jackson.databind.JsonNode;

import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The part of JSON Schema 2020-12 (OpenAPI 3.1's dialect) that openapi.yaml uses, and nothing more: a schema with
 * any other keyword is refused by {@link #check}, so the document cannot rely on something this validator would
 * silently skip. References are local ({@code #/components/...}) and resolved against the whole document.
 */
final class JsonSchemaSubset {

    /** Keywords that constrain a value. */
    private static final Set<String> ASSERTIONS = Set.of("$ref", "type", "enum", "const", "properties", "required",
            "additionalProperties", "dependentRequired", "items", "minItems", "maxItems", "minimum", "maximum",
            "exclusiveMinimum", "minLength", "maxLength", "pattern", "format", "oneOf", "anyOf", "allOf");
    /** Keywords that only describe. */
    private static final Set<String> ANNOTATIONS = Set.of("description", "title", "examples", "example", "default",
            "deprecated", "readOnly", "writeOnly", "$comment");
    private static final Set<String> TYPES = Set.of("object", "array", "string", "number", "integer", "boolean", "null");
    private static final Set<String> FORMATS = Set.of("date-time", "byte");

    private final JsonNode document;
    private final Map<String, Pattern> patterns = new java.util.HashMap<>();

    JsonSchemaSubset(JsonNode document) {
        this.document = document;
    }

    // ---- the schema itself ---------------------------------------------------------------------------------------

    /**
     * Refuses a schema (and everything it contains or references) that uses a keyword outside the subset, an
     * unknown type or format, a bad regular expression, or a reference that does not resolve.
     */
    void check(JsonNode schema, String where) {
        check(schema, where, new IdentityHashMap<>());
    }

    private void check(JsonNode schema, String where, IdentityHashMap<JsonNode, Boolean> seen) {
        if (schema.isBoolean()) {
            return;
        }
        if (!schema.isObject()) {
            throw new IllegalArgumentException(where + ": a schema must be an object or a boolean, got " + schema);
        }
        if (seen.put(schema, true) != null) {
            return;
        }
        for (String k : schema.propertyNames()) {
            if (!ASSERTIONS.contains(k) && !ANNOTATIONS.contains(k) && !k.startsWith("x-")) {
                throw new IllegalArgumentException(where + ": keyword '" + k + "' is outside the subset this test "
                        + "validates; extend JsonSchemaSubset or do without it");
            }
        }
        if (schema.has("$ref")) {
            check(resolve(schema.get("$ref").asString(), where), where + " -> " + schema.get("$ref").asString(), seen);
        }
        if (schema.has("type")) {
            for (String t : types(schema.get("type"))) {
                if (!TYPES.contains(t)) {
                    throw new IllegalArgumentException(where + ": unknown type '" + t + "'");
                }
            }
        }
        if (schema.has("format") && !FORMATS.contains(schema.get("format").asString())) {
            throw new IllegalArgumentException(where + ": format '" + schema.get("format").asString()
                    + "' is not checked by this validator");
        }
        if (schema.has("pattern")) {
            pattern(schema.get("pattern").asString());
        }
        if (schema.has("properties")) {
            for (Map.Entry<String, JsonNode> p : schema.get("properties").properties()) {
                check(p.getValue(), where + "/properties/" + p.getKey(), seen);
            }
        }
        if (schema.has("required") && schema.has("properties")) {
            for (JsonNode r : schema.get("required")) {
                if (!schema.get("properties").has(r.asString())) {
                    throw new IllegalArgumentException(where + ": required '" + r.asString() + "' is not a property");
                }
            }
        }
        if (schema.has("additionalProperties")) {
            check(schema.get("additionalProperties"), where + "/additionalProperties", seen);
        }
        if (schema.has("items")) {
            check(schema.get("items"), where + "/items", seen);
        }
        for (String combinator : List.of("oneOf", "anyOf", "allOf")) {
            if (schema.has(combinator)) {
                int i = 0;
                for (JsonNode s : schema.get(combinator)) {
                    check(s, where + "/" + combinator + "/" + i++, seen);
                }
            }
        }
    }

    JsonNode resolve(String ref, String where) {
        if (!ref.startsWith("#/")) {
            throw new IllegalArgumentException(where + ": only local references are supported, got " + ref);
        }
        JsonNode target = document.at(ref.substring(1));
        if (target.isMissingNode()) {
            throw new IllegalArgumentException(where + ": reference " + ref + " does not resolve");
        }
        return target;
    }

    // ---- values --------------------------------------------------------------------------------------------------

    /** The problems of {@code value} against {@code schema}, each with its JSON pointer; empty when it is valid. */
    List<String> validate(JsonNode schema, JsonNode value) {
        List<String> errors = new ArrayList<>();
        validate(schema, value, "", errors);
        return errors;
    }

    private void validate(JsonNode schema, JsonNode value, String at, List<String> errors) {
        if (schema.isBoolean()) {
            if (!schema.asBoolean()) {
                errors.add(at + ": no value is allowed here");
            }
            return;
        }
        String path = at.isEmpty() ? "/" : at;
        if (schema.has("$ref")) {
            validate(resolve(schema.get("$ref").asString(), path), value, at, errors);
        }
        if (schema.has("type")) {
            List<String> types = types(schema.get("type"));
            if (types.stream().noneMatch(t -> isType(value, t))) {
                errors.add(path + ": expected " + String.join(" or ", types) + ", got " + describe(value));
                return;
            }
        }
        if (schema.has("enum")) {
            boolean any = false;
            for (JsonNode e : schema.get("enum")) {
                any |= same(e, value);
            }
            if (!any) {
                errors.add(path + ": " + describe(value) + " is not one of " + schema.get("enum"));
            }
        }
        if (schema.has("const") && !same(schema.get("const"), value)) {
            errors.add(path + ": expected " + schema.get("const") + ", got " + describe(value));
        }
        if (value.isObject()) {
            object(schema, value, at, errors);
        }
        if (value.isArray()) {
            if (schema.has("minItems") && value.size() < schema.get("minItems").asInt()) {
                errors.add(path + ": " + value.size() + " items, fewer than " + schema.get("minItems").asInt());
            }
            if (schema.has("maxItems") && value.size() > schema.get("maxItems").asInt()) {
                errors.add(path + ": " + value.size() + " items, more than " + schema.get("maxItems").asInt());
            }
            if (schema.has("items")) {
                for (int i = 0; i < value.size(); i++) {
                    validate(schema.get("items"), value.get(i), at + "/" + i, errors);
                }
            }
        }
        if (value.isNumber()) {
            double v = value.asDouble();
            if (schema.has("minimum") && v < schema.get("minimum").asDouble()) {
                errors.add(path + ": " + value + " is below the minimum " + schema.get("minimum"));
            }
            if (schema.has("maximum") && v > schema.get("maximum").asDouble()) {
                errors.add(path + ": " + value + " is above the maximum " + schema.get("maximum"));
            }
            if (schema.has("exclusiveMinimum") && v <= schema.get("exclusiveMinimum").asDouble()) {
                errors.add(path + ": " + value + " is not above " + schema.get("exclusiveMinimum"));
            }
        }
        if (value.isString()) {
            string(schema, value.asString(), path, errors);
        }
        combinators(schema, value, at, path, errors);
    }

    private void object(JsonNode schema, JsonNode value, String at, List<String> errors) {
        String path = at.isEmpty() ? "/" : at;
        JsonNode props = schema.get("properties");
        if (schema.has("required")) {
            for (JsonNode r : schema.get("required")) {
                if (!value.has(r.asString())) {
                    errors.add(path + ": required property '" + r.asString() + "' is missing");
                }
            }
        }
        if (schema.has("dependentRequired")) {
            for (Map.Entry<String, JsonNode> d : schema.get("dependentRequired").properties()) {
                if (value.has(d.getKey())) {
                    for (JsonNode r : d.getValue()) {
                        if (!value.has(r.asString())) {
                            errors.add(path + ": '" + d.getKey() + "' needs '" + r.asString() + "'");
                        }
                    }
                }
            }
        }
        for (Iterator<String> it = value.propertyNames().iterator(); it.hasNext(); ) {
            String name = it.next();
            String child = at + "/" + name.replace("~", "~0").replace("/", "~1");
            if (props != null && props.has(name)) {
                validate(props.get(name), value.get(name), child, errors);
            } else if (schema.has("additionalProperties")) {
                validate(schema.get("additionalProperties"), value.get(name), child, errors);
            }
        }
    }

    private void string(JsonNode schema, String s, String path, List<String> errors) {
        if (schema.has("minLength") && s.codePointCount(0, s.length()) < schema.get("minLength").asInt()) {
            errors.add(path + ": shorter than " + schema.get("minLength").asInt());
        }
        if (schema.has("maxLength") && s.codePointCount(0, s.length()) > schema.get("maxLength").asInt()) {
            errors.add(path + ": longer than " + schema.get("maxLength").asInt());
        }
        if (schema.has("pattern") && !pattern(schema.get("pattern").asString()).matcher(s).find()) {
            errors.add(path + ": '" + s + "' does not match " + schema.get("pattern").asString());
        }
        if (schema.has("format")) {
            switch (schema.get("format").asString()) {
                case "date-time" -> {
                    try {
                        OffsetDateTime.parse(s);
                    } catch (DateTimeParseException e) {
                        errors.add(path + ": '" + s + "' is not an RFC 3339 date-time");
                    }
                }
                case "byte" -> {
                    try {
                        Base64.getDecoder().decode(s);
                    } catch (IllegalArgumentException e) {
                        errors.add(path + ": not base64");
                    }
                }
                default -> errors.add(path + ": unchecked format " + schema.get("format").asString());
            }
        }
    }

    private void combinators(JsonNode schema, JsonNode value, String at, String path, List<String> errors) {
        if (schema.has("allOf")) {
            for (JsonNode s : schema.get("allOf")) {
                validate(s, value, at, errors);
            }
        }
        if (schema.has("anyOf")) {
            boolean any = false;
            for (JsonNode s : schema.get("anyOf")) {
                any |= validate(s, value).isEmpty();
            }
            if (!any) {
                errors.add(path + ": matches none of anyOf");
            }
        }
        if (schema.has("oneOf")) {
            int matches = 0;
            List<String> why = new ArrayList<>();
            for (JsonNode s : schema.get("oneOf")) {
                List<String> e = new ArrayList<>();
                validate(s, value, at, e);
                if (e.isEmpty()) {
                    matches++;
                } else {
                    why.addAll(e);
                }
            }
            if (matches != 1) {
                errors.add(path + ": matches " + matches + " of oneOf (exactly one needed)"
                        + (matches == 0 ? ": " + why : ""));
            }
        }
    }

    private Pattern pattern(String regex) {
        return patterns.computeIfAbsent(regex, Pattern::compile);
    }

    private static List<String> types(JsonNode type) {
        List<String> out = new ArrayList<>();
        if (type.isArray()) {
            type.forEach(t -> out.add(t.asString()));
        } else {
            out.add(type.asString());
        }
        return out;
    }

    private static boolean isType(JsonNode v, String type) {
        return switch (type) {
            case "object" -> v.isObject();
            case "array" -> v.isArray();
            case "string" -> v.isString();
            case "number" -> v.isNumber();
            // JSON Schema: a number with a zero fractional part is an integer.
            case "integer" -> v.isIntegralNumber() || (v.isNumber() && v.asDouble() == Math.rint(v.asDouble())
                    && !Double.isInfinite(v.asDouble()));
            case "boolean" -> v.isBoolean();
            case "null" -> v.isNull();
            default -> false;
        };
    }

    private static boolean same(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue()) == 0;
        }
        return a.equals(b);
    }

    private static String describe(JsonNode v) {
        String s = v.toString();
        return (v.isNull() ? "null" : v.getNodeType().name().toLowerCase()) + " "
                + (s.length() > 80 ? s.substring(0, 80) + "…" : s);
    }
}
