package dev.imexprobe.web;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The validator the contract tests rely on: it must find what is wrong, and refuse what it cannot check. */
class JsonSchemaSubsetTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static final JsonSchemaSubset V = new JsonSchemaSubset(JSON.readTree("""
            {"components": {"schemas": {
              "Stage": {"type": "object", "required": ["name", "status"], "additionalProperties": false,
                        "dependentRequired": {"cuResult": ["cuResultName"]},
                        "properties": {
                          "name": {"type": "string", "enum": ["create", "import"]},
                          "status": {"type": "string"},
                          "cuResult": {"type": "integer", "minimum": 0},
                          "cuResultName": {"type": "string", "pattern": "^CUDA_"},
                          "at": {"type": "string", "format": "date-time"},
                          "handle": {"type": "string", "format": "byte"},
                          "note": {"type": ["string", "null"], "maxLength": 3}}},
              "List": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"$ref": "#/components/schemas/Stage"}},
              "Number": {"oneOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+$"}]},
              "Map": {"type": "object", "additionalProperties": {"type": "integer"}}
            }}}"""));

    private static JsonNode schema(String name) {
        return JSON.readTree("{\"$ref\":\"#/components/schemas/" + name + "\"}");
    }

    private static java.util.List<String> check(String name, String json) {
        return V.validate(schema(name), JSON.readTree(json));
    }

    @Test
    void aValidDocumentHasNoErrors() {
        assertThat(check("Stage", "{\"name\":\"import\",\"status\":\"failed\",\"cuResult\":800,"
                + "\"cuResultName\":\"CUDA_ERROR_NOT_PERMITTED\",\"at\":\"2026-12-02T12:21:39.546567208Z\","
                + "\"handle\":\"AAAA\",\"note\":null}")).isEmpty();
        assertThat(check("List", "[{\"name\":\"create\",\"status\":\"ok\"}]")).isEmpty();
        assertThat(check("Number", "42")).isEmpty();
        assertThat(check("Number", "\"42\"")).isEmpty();
        assertThat(check("Map", "{\"a\":1,\"b\":2.0}")).as("2.0 is an integer in JSON Schema").isEmpty();
    }

    @Test
    void findsEachKindOfProblemWithItsPointer() {
        assertThat(check("Stage", "{\"status\":\"ok\"}")).containsExactly("/: required property 'name' is missing");
        assertThat(check("Stage", "{\"name\":\"export\",\"status\":\"ok\"}"))
                .containsExactly("/name: string \"export\" is not one of [\"create\",\"import\"]");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"extra\":1}"))
                .containsExactly("/extra: no value is allowed here");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"cuResult\":1}"))
                .containsExactly("/: 'cuResult' needs 'cuResultName'");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"cuResult\":-1,\"cuResultName\":\"x\"}"))
                .containsExactly("/cuResult: -1 is below the minimum 0", "/cuResultName: 'x' does not match ^CUDA_");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":7}"))
                .containsExactly("/status: expected string, got number 7");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"cuResult\":1.5,\"cuResultName\":\"CUDA_X\"}"))
                .containsExactly("/cuResult: expected integer, got number 1.5");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"at\":\"yesterday\"}"))
                .containsExactly("/at: 'yesterday' is not an RFC 3339 date-time");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"handle\":\"!!\"}"))
                .containsExactly("/handle: not base64");
        assertThat(check("Stage", "{\"name\":\"create\",\"status\":\"ok\",\"note\":\"long\"}"))
                .containsExactly("/note: longer than 3");
        assertThat(check("List", "[]")).containsExactly("/: 0 items, fewer than 1");
        assertThat(check("List", "[{\"name\":\"create\",\"status\":\"ok\"},{\"name\":\"create\"},{}]"))
                .contains("/: 3 items, more than 2", "/1: required property 'status' is missing",
                        "/2: required property 'name' is missing");
        assertThat(check("Number", "\"4x\"")).hasSize(1).first().asString().startsWith("/: matches 0 of oneOf");
        assertThat(check("Map", "{\"a\":\"one\"}")).containsExactly("/a: expected integer, got string \"one\"");
    }

    @Test
    void refusesSchemasItCannotCheck() {
        JsonSchemaSubset v = new JsonSchemaSubset(JSON.readTree("{}"));
        assertThatThrownBy(() -> v.check(JSON.readTree("{\"type\":\"string\",\"contentSchema\":{}}"), "X"))
                .hasMessage("X: keyword 'contentSchema' is outside the subset this test validates; extend "
                        + "JsonSchemaSubset or do without it");
        assertThatThrownBy(() -> v.check(JSON.readTree("{\"type\":\"string\",\"format\":\"email\"}"), "X"))
                .hasMessage("X: format 'email' is not checked by this validator");
        assertThatThrownBy(() -> v.check(JSON.readTree("{\"$ref\":\"#/components/schemas/Nope\"}"), "X"))
                .hasMessage("X: reference #/components/schemas/Nope does not resolve");
        assertThatThrownBy(() -> v.check(JSON.readTree("{\"type\":\"int\"}"), "X"))
                .hasMessage("X: unknown type 'int'");
        assertThatThrownBy(() -> v.check(JSON.readTree("{\"required\":[\"a\"],\"properties\":{\"b\":{}}}"), "X"))
                .hasMessage("X: required 'a' is not a property");
        // Extensions and annotations are fine.
        v.check(JSON.readTree("{\"type\":\"string\",\"description\":\"d\",\"examples\":[\"e\"],\"x-note\":1}"), "X");
    }
}
