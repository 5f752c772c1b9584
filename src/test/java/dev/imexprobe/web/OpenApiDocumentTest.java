package dev.imexprobe.web;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.finding.Severity;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * openapi.yaml on its own, and docs/api.md against it: every schema is checkable, the enums are the code's,
 * errors are problem+json, exactly the endpoints the auth filter guards declare security, and every example
 * document in api.md validates against the schema named above it. (OpenApiContractIT holds the file against a
 * running agent.)
 */
class OpenApiDocumentTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final OpenApi API = OpenApi.load();
    private static final Path API_MD = Path.of("docs", "api.md");

    @Test
    void isOpenApi31AndEverySchemaIsOneTheValidatorChecksFully() {
        assertThat(API.doc.get("openapi").asString()).startsWith("3.1.");
        for (Map.Entry<String, JsonNode> s : API.doc.get("components").get("schemas").properties()) {
            API.schemas.check(s.getValue(), "#/components/schemas/" + s.getKey());
        }
        int inline = 0;
        for (OpenApi.Operation op : API.operations()) {
            for (JsonNode p : op.node().path("parameters")) {
                JsonNode param = p.has("$ref") ? API.schemas.resolve(p.get("$ref").asString(), op.key()) : p;
                API.schemas.check(param.get("schema"), op.key() + " parameter " + param.get("name").asString());
                inline++;
            }
            for (JsonNode media : op.node().path("requestBody").path("content")) {
                API.schemas.check(media.get("schema"), op.key() + " request body");
                inline++;
            }
            for (Map.Entry<String, JsonNode> r : op.node().get("responses").properties()) {
                JsonNode response = API.response(op, Integer.parseInt(r.getKey()));
                for (JsonNode media : response.path("content")) {
                    API.schemas.check(media.get("schema"), op.key() + " " + r.getKey());
                    inline++;
                }
            }
        }
        assertThat(inline).as("schemas found in operations").isGreaterThan(40);
    }

    @Test
    void enumsAreTheCodes() {
        assertThat(strings(API.schema("FindingCode").get("enum")))
                .containsExactlyElementsOf(Arrays.stream(FindingCode.values()).map(Enum::name).toList());
        assertThat(strings(API.schema("StageName").get("enum")))
                .as("in the order of the stages")
                .containsExactlyElementsOf(Arrays.stream(Stage.values()).map(Stage::label).toList());
        assertThat(strings(API.schema("StageResult").get("properties").get("status").get("enum")))
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(StageStatus.values()).map(StageStatus::label).toList());
        assertThat(strings(API.schema("Verdict").get("enum")))
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(Verdict.values()).map(Verdict::label).toList());
        assertThat(strings(API.schema("Finding").get("properties").get("severity").get("enum")))
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(Severity.values()).map(Severity::label).toList());
        assertThat(strings(API.schema("Finding").get("properties").get("blame").get("enum")))
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(Blame.values()).map(Blame::label).toList());
        assertThat(strings(API.schema("PairResult").get("properties").get("direction").get("enum")))
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(Direction.values()).map(Direction::label).toList());
    }

    @Test
    void everyOperationIsDescribedAndEveryErrorIsAProblem() {
        Set<String> ids = new HashSet<>();
        for (OpenApi.Operation op : API.operations()) {
            assertThat(op.node().has("operationId")).as(op.key()).isTrue();
            assertThat(ids.add(op.node().get("operationId").asString())).as("unique operationId of %s", op.key()).isTrue();
            assertThat(op.node().path("summary").asString()).as(op.key()).isNotBlank();
            for (Map.Entry<String, JsonNode> r : op.node().get("responses").properties()) {
                int status = Integer.parseInt(r.getKey());
                JsonNode content = API.response(op, status).get("content");
                if (status >= 400 && !op.path().startsWith("/actuator")) {
                    assertThat(content.propertyNames()).as("%s %s", op.key(), status)
                            .containsExactly("application/problem+json");
                    assertThat(content.get("application/problem+json").get("schema").get("$ref").asString())
                            .isEqualTo("#/components/schemas/Problem");
                }
            }
        }
    }

    @Test
    void exactlyTheEndpointsTheFilterGuardsDeclareBothSchemesAndA401() {
        for (OpenApi.Operation op : API.operations()) {
            String concrete = op.path().replaceAll("\\{[^}]+}", "some-id");
            boolean guarded = AgentAuthFilter.guarded(concrete);
            JsonNode security = op.node().get("security");
            if (guarded) {
                assertThat(security).as("security of %s", op.key()).isNotNull();
                List<String> schemes = new ArrayList<>();
                security.forEach(s -> schemes.addAll(s.propertyNames()));
                assertThat(schemes).as(op.key()).containsExactly("bearerAuth", "agentHmac");
                assertThat(op.node().get("responses").has("401")).as(op.key()).isTrue();
            } else {
                assertThat(security == null || security.isEmpty()).as("%s is open", op.key()).isTrue();
                assertThat(op.node().get("responses").has("401")).as(op.key()).isFalse();
            }
        }
        assertThat(API.doc.get("components").get("securitySchemes").get("agentHmac").get("scheme").asString())
                .isEqualTo("IMEXPROBE-HMAC");
    }

    @Test
    void apiMdCoversEveryOperation() throws IOException {
        String md = Files.readString(API_MD);
        for (OpenApi.Operation op : API.operations()) {
            assertThat(md).as("docs/api.md mentions %s", op.key()).contains(op.method() + " " + op.path());
        }
    }

    private static final Pattern BLOCK = Pattern.compile("(?:<!-- schema: (\\w+) -->\\n)?```json\\n(.*?)\\n```",
            Pattern.DOTALL);

    @Test
    void everyExampleInApiMdIsValidJsonAndValidatesAgainstItsSchema() throws IOException {
        String md = Files.readString(API_MD);
        Matcher m = BLOCK.matcher(md);
        int validated = 0;
        List<String> schemasUsed = new ArrayList<>();
        while (m.find()) {
            JsonNode doc = JSON.readTree(m.group(2));
            if (m.group(1) != null) {
                List<String> errors = API.schemas.validate(API.schema(m.group(1)), doc);
                assertThat(errors).as("example %s in docs/api.md", m.group(1)).isEmpty();
                schemasUsed.add(m.group(1));
                validated++;
            }
        }
        assertThat(validated).isGreaterThanOrEqualTo(14);
        assertThat(schemasUsed).contains("ProbeReport", "ExportReply", "StageReply", "ImportReply", "NodeReport",
                "MeshView", "Problem", "Health");
    }

    @Test
    void theValidatorRejectsADamagedExample() throws IOException {
        // The examples test above is only worth something if a wrong document fails it.
        String md = Files.readString(API_MD);
        Matcher m = BLOCK.matcher(md);
        while (m.find() && !"ImportReply".equals(m.group(1))) {
            // look for the first ImportReply
        }
        JsonNode doc = JSON.readTree(m.group(2));
        ((tools.jackson.databind.node.ObjectNode) doc.get("stages").get(0)).remove("cuResultName");
        ((tools.jackson.databind.node.ObjectNode) doc).put("memory", "AAAA");
        assertThat(API.schemas.validate(API.schema("ImportReply"), doc))
                .containsExactlyInAnyOrder("/stages/0: 'cuResult' needs 'cuResultName'", "/memory: no value is allowed here");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }
}
