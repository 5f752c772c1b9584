package dev.imexprobe.web;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

import dev.imexprobe.api.WireRequest;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;

import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.annotation.JsonDeserialize;
import tools.jackson.databind.json.JsonMapper;

import java.lang.reflect.Field;
import java.lang.reflect.RecordComponent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * openapi.yaml against the records of the REST contract (every record in dev.imexprobe.api): each has the schema
 * of its name, with the same fields both ways, the same JSON kind per field, and for requests the same required
 * fields and unknown fields refused. A field added to a record and not to the document fails here.
 */
class OpenApiRecordsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static List<Class<?>> contractRecords() {
        List<Class<?>> records = new ArrayList<>();
        for (JavaClass c : new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.imexprobe.api")) {
            Class<?> k = c.reflect();
            if (k.isRecord() && k.getEnclosingClass() == null) {
                records.add(k);
            }
        }
        records.sort((a, b) -> a.getName().compareTo(b.getName()));
        return records;
    }

    @Test
    void everyRecordOfTheContractIsTheSchemaOfItsName() {
        OpenApi api = OpenApi.load();
        List<Class<?>> records = contractRecords();
        assertThat(records).as("records in dev.imexprobe.api").extracting(Class::getSimpleName)
                .contains("ImportRequest", "ExportRequest", "VerifyRequest", "LadderRequest", "ImportReply",
                        "ExportReply", "StageReply", "ExporterInfo");
        List<String> differences = new ArrayList<>();
        for (Class<?> r : records) {
            differences.addAll(differences(r, api.schema(r.getSimpleName())));
        }
        assertThat(differences).as("openapi.yaml against the records").isEmpty();
    }

    @Test
    void theCheckFindsAFieldMissingEitherWayARequiredFieldAndAKind() throws Exception {
        JsonNode schema = JSON.readTree("""
                {"type": "object", "required": ["a"], "additionalProperties": false,
                 "properties": {"a": {"type": "string"}, "c": {"type": "string"}}}""");
        assertThat(differences(Synthetic.class, schema)).containsExactly(
                "Synthetic: field b is not in the schema",
                "Synthetic: the schema's c is not a field",
                "Synthetic.a: the record reads integer (WholeNumber), the schema says string",
                "Synthetic: required [a, b] in the record, [a] in the schema");
        JsonNode open = JSON.readTree("""
                {"type": "object", "required": ["a", "b"],
                 "properties": {"a": {"$ref": "#/components/schemas/WholeNumber"}, "b": {"type": "string"}}}""");
        assertThat(differences(Synthetic.class, open))
                .containsExactly("Synthetic: a request must refuse unknown fields (additionalProperties: false)");
    }

    /** A request as the API's are written, to prove the check can fail. */
    record Synthetic(
            @JsonDeserialize(using = WholeNumberForTest.class) @NotNull Long a,
            @NotBlank String b) implements SyntheticRequest {
    }

    interface SyntheticRequest {
    }

    /** Stands for the contract's whole-number reader, which is package-private to dev.imexprobe.api. */
    static final class WholeNumberForTest extends tools.jackson.databind.ValueDeserializer<Long> {
        @Override
        public Long deserialize(tools.jackson.core.JsonParser p, tools.jackson.databind.DeserializationContext c) {
            return p.getLongValue();
        }
    }

    static List<String> differences(Class<?> record, JsonNode schema) {
        String name = record.getSimpleName();
        List<String> out = new ArrayList<>();
        JsonNode properties = schema.get("properties");
        List<String> fields = Arrays.stream(record.getRecordComponents()).map(RecordComponent::getName).toList();
        for (String f : fields) {
            if (properties == null || !properties.has(f)) {
                out.add(name + ": field " + f + " is not in the schema");
            }
        }
        if (properties != null) {
            for (Map.Entry<String, JsonNode> p : properties.properties()) {
                if (!fields.contains(p.getKey())) {
                    out.add(name + ": the schema's " + p.getKey() + " is not a field");
                }
            }
        }
        for (RecordComponent c : record.getRecordComponents()) {
            JsonNode p = properties == null ? null : properties.get(c.getName());
            if (p != null) {
                String expected = kind(c);
                String documented = kind(p);
                if (!expected.equals(documented)) {
                    out.add(name + "." + c.getName() + ": the record reads " + expected + ", the schema says "
                            + documented);
                }
            }
        }
        boolean request = WireRequest.class.isAssignableFrom(record) || record == Synthetic.class;
        if (request) {
            TreeSet<String> required = new TreeSet<>();
            for (RecordComponent c : record.getRecordComponents()) {
                Field f = field(c);
                if (f.isAnnotationPresent(NotNull.class) || f.isAnnotationPresent(NotBlank.class)) {
                    required.add(c.getName());
                }
            }
            TreeSet<String> documented = new TreeSet<>(names(schema.get("required")));
            if (!required.equals(documented)) {
                out.add(name + ": required " + required + " in the record, " + documented + " in the schema");
            }
            if (!schema.has("additionalProperties") || schema.get("additionalProperties").asBoolean(true)) {
                out.add(name + ": a request must refuse unknown fields (additionalProperties: false)");
            }
        }
        return out;
    }

    /** The component's field: where its Jackson and Bean Validation annotations land (they do not target components). */
    private static Field field(RecordComponent c) {
        try {
            return c.getDeclaringRecord().getDeclaredField(c.getName());
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Collection<String> names(JsonNode array) {
        List<String> list = new ArrayList<>();
        if (array != null) {
            array.forEach(n -> list.add(n.asString()));
        }
        return list;
    }

    /** What a record field is in JSON: a JSON type, or the schema it must reference. */
    static String kind(RecordComponent c) {
        JsonDeserialize reader = field(c).getAnnotation(JsonDeserialize.class);
        String using = reader == null ? "" : reader.using().getSimpleName();
        if (using.startsWith("WholeNumber")) {
            return "integer (WholeNumber)";
        }
        if (using.equals("GpuRef")) {
            return "GpuSelector";
        }
        Class<?> t = c.getType();
        if (t == int.class || t == long.class || t == Integer.class || t == Long.class) {
            return "integer";
        }
        if (t == double.class || t == Double.class || t == float.class) {
            return "number";
        }
        if (t == boolean.class || t == Boolean.class) {
            return "boolean";
        }
        if (t == String.class || t == Instant.class) {
            return "string";
        }
        if (List.class.isAssignableFrom(t)) {
            return "array";
        }
        return t.getSimpleName();
    }

    /** What the document says a property is: its type (null aside), or the schema it references. */
    static String kind(JsonNode p) {
        if (p.has("$ref")) {
            String ref = p.get("$ref").asString();
            String target = ref.substring(ref.lastIndexOf('/') + 1);
            return target.equals("WholeNumber") ? "integer (WholeNumber)" : target;
        }
        JsonNode type = p.get("type");
        if (type == null) {
            return "(no type)";
        }
        if (type.isArray()) {
            for (JsonNode t : type) {
                if (!t.asString().equals("null")) {
                    return t.asString();
                }
            }
        }
        return type.asString();
    }
}
