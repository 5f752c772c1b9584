package dev.imexprobe.web;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** src/main/resources/static/openapi.yaml, read as JSON, and the questions the tests ask of it. */
final class OpenApi {

    static final Path FILE = Path.of("src", "main", "resources", "static", "openapi.yaml");
    static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** One operation: method (upper case) and path template as the document writes them. */
    record Operation(String method, String path, JsonNode node) {
        String key() {
            return method + " " + path;
        }
    }

    final JsonNode doc;
    final JsonSchemaSubset schemas;

    private OpenApi(JsonNode doc) {
        this.doc = doc;
        this.schemas = new JsonSchemaSubset(doc);
    }

    static OpenApi load() {
        try {
            return parse(Files.readString(FILE.toAbsolutePath()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static OpenApi parse(String yaml) {
        // SafeConstructor: plain maps, lists and scalars; dates stay strings (no implicit timestamps to Date).
        LoaderOptions options = new LoaderOptions();
        Object tree = new Yaml(new SafeConstructor(options) {
            {
                yamlConstructors.put(org.yaml.snakeyaml.nodes.Tag.TIMESTAMP, yamlConstructors.get(
                        org.yaml.snakeyaml.nodes.Tag.STR));
            }
        }).load(yaml);
        if (!(tree instanceof Map<?, ?>)) {
            throw new IllegalArgumentException("openapi.yaml is not a mapping");
        }
        return new OpenApi(JSON.valueToTree(tree));
    }

    List<Operation> operations() {
        List<Operation> out = new ArrayList<>();
        for (Map.Entry<String, JsonNode> p : doc.get("paths").properties()) {
            for (Map.Entry<String, JsonNode> m : p.getValue().properties()) {
                if (METHODS.contains(m.getKey())) {
                    out.add(new Operation(m.getKey().toUpperCase(Locale.ROOT), p.getKey(), m.getValue()));
                }
            }
        }
        return out;
    }

    Operation operation(String method, String path) {
        return operations().stream().filter(o -> o.method().equals(method) && o.path().equals(path)).findFirst()
                .orElse(null);
    }

    /** The response object of an operation for a status, references resolved; null when not documented. */
    JsonNode response(Operation op, int status) {
        JsonNode r = op.node().get("responses").get(Integer.toString(status));
        if (r == null) {
            return null;
        }
        return r.has("$ref") ? schemas.resolve(r.get("$ref").asString(), op.key()) : r;
    }

    JsonNode schema(String name) {
        JsonNode s = doc.get("components").get("schemas").get(name);
        if (s == null) {
            throw new IllegalArgumentException("no schema " + name + " in openapi.yaml");
        }
        return s;
    }

    /** Does a request path (no query) fall under this path template? {name} matches one segment. */
    static boolean matches(String template, String path) {
        String regex = java.util.regex.Pattern.quote(template).replaceAll("\\{[^}/]+}", "\\\\E[^/]+\\\\Q");
        return path.matches(regex);
    }
}
