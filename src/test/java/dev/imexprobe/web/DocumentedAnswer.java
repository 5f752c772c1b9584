package dev.imexprobe.web;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * openapi.yaml as a judge of single answers, for tests outside this package (the hostile-input tests of
 * dev.imexprobe.security): is this status documented for the operation, is the media type, does the body
 * validate against the schema? The file is read once.
 */
public final class DocumentedAnswer {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final OpenApi API = OpenApi.load();

    private DocumentedAnswer() {
    }

    /**
     * What is wrong with this answer to {@code method path} (the path as the operation is documented, or a
     * concrete path it matches); empty when it is as documented. An answer to a path no operation has must be a
     * problem (status 4xx, problem+json, the Problem schema).
     */
    public static List<String> problems(String method, String path, int status, String contentType, String body) {
        List<String> out = new ArrayList<>();
        OpenApi.Operation op = API.operations().stream()
                .filter(o -> o.method().equals(method) && (o.path().equals(path) || OpenApi.matches(o.path(), path)))
                .findFirst().orElse(null);
        String mediaType = contentType.split(";")[0].trim().toLowerCase(Locale.ROOT);
        if (op == null) {
            if (status < 400) {
                out.add(method + " " + path + ": " + status + " for a path and method openapi.yaml does not have");
                return out;
            }
            if (!mediaType.equals("application/problem+json")) {
                out.add(method + " " + path + ": " + status + " as " + mediaType + ", not application/problem+json");
                return out;
            }
            return validate(API.schema("Problem"), body, method + " " + path + " " + status);
        }
        JsonNode response = API.response(op, status);
        if (response == null) {
            // Statuses of the API as a whole (wrong method on a path, body too large for the container) are problems.
            if (status >= 400 && mediaType.equals("application/problem+json")) {
                return validate(API.schema("Problem"), body, op.key() + " " + status + " (not listed for it)");
            }
            out.add(op.key() + ": status " + status + " is not documented (media type " + mediaType + ")");
            return out;
        }
        JsonNode media = response.path("content").get(mediaType);
        if (media == null) {
            out.add(op.key() + " " + status + ": media type " + mediaType + " not documented (documented: "
                    + response.path("content").propertyNames() + ")");
            return out;
        }
        if (mediaType.endsWith("json")) {
            return validate(media.get("schema"), body, op.key() + " " + status);
        }
        if (body.isBlank()) {
            out.add(op.key() + " " + status + ": empty " + mediaType + " body");
        }
        return out;
    }

    /** Is {@code body} a problem+json document of the Problem schema? */
    public static List<String> problemSchema(String body) {
        return validate(API.schema("Problem"), body, "problem");
    }

    private static List<String> validate(JsonNode schema, String body, String where) {
        JsonNode value;
        try {
            value = JSON.readTree(body);
        } catch (JacksonException e) {
            return List.of(where + ": body is not JSON: " + e.getOriginalMessage());
        }
        List<String> out = new ArrayList<>();
        for (String e : API.schemas.validate(schema, value)) {
            out.add(where + ": " + e);
        }
        return out;
    }
}
