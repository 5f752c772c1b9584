package dev.imexprobe.api;

import dev.imexprobe.json.Json;

import jakarta.validation.Validation;
import jakarta.validation.Validator;
import jakarta.validation.ValidatorFactory;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The contract read without Spring: the same records and messages a servlet or functional endpoint gets. */
class WireTest {

    private static final ValidatorFactory FACTORY = Validation.buildDefaultValidatorFactory();
    private static final Validator VALIDATOR = FACTORY.getValidator();
    private static final String HANDLE = Base64.getEncoder().encodeToString(new byte[64]);

    @AfterAll
    static void close() {
        FACTORY.close();
    }

    private static byte[] bytes(String s) {
        return s.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
    }

    private static String imp(String extra) {
        return "{'handle':'" + HANDLE + "','handleType':'FABRIC','sizeBytes':2097152" + extra + "}";
    }

    @Test
    void readsAValidImportWithSeedsAsStringsOrNumbers() {
        ImportRequest r = Wire.read(bytes(imp(",'gpu':1,'seed':'-9223372036854775808','writebackSeed':5")),
                ImportRequest.class, VALIDATOR);
        assertThat(r.gpu()).isEqualTo("1");
        assertThat(r.seed()).isEqualTo(Long.MIN_VALUE);
        assertThat(r.writebackSeed()).isEqualTo(5L);
        assertThat(r.sizeBytes()).isEqualTo(2097152L);
        assertThat(r.fabricHandle().bytes()).hasSize(64);
    }

    @Test
    void theClientWritesSeedsAsDecimalStringsAndLeavesAbsentFieldsOut() {
        String json = Json.MAPPER.writeValueAsString(new ImportRequest(HANDLE, "FABRIC", 2097152L, "GPU-x",
                Long.MAX_VALUE, null, "node-a", null));
        assertThat(json).contains("\"seed\":\"9223372036854775807\"").contains("\"sizeBytes\":2097152")
                .doesNotContain("writebackSeed").doesNotContain("writebackAfterSeed");
        // and reads back as it was written
        assertThat(Wire.read(json.getBytes(StandardCharsets.UTF_8), ImportRequest.class, VALIDATOR).seed())
                .isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void anAbsentBodyIsAnEmptyObject() {
        assertThat(Wire.read(null, ExportRequest.class, VALIDATOR)).isEqualTo(new ExportRequest(null, null, null, null));
        assertThatThrownBy(() -> Wire.read(new byte[0], VerifyRequest.class, VALIDATOR))
                .hasMessage("seed is required: the seed of the pattern the importer wrote");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "unknown field|{'handle':'x','colour':1}|unknown field 'colour' (known: exporterGpu, exporterNode, gpu, handle, handleType, seed, sizeBytes, writebackSeed)",
            "array|[1,2]|request body must be a JSON object",
            "null|null|request body must be a JSON object",
            "number|5|request body must be a JSON object",
            "handle a number|{'handle':64}|handle must be a string",
            "size fractional|{'sizeBytes':2097152.5}|sizeBytes must be a whole number within 64 bits (a JSON number or a decimal string)",
            "size beyond 64 bits|{'sizeBytes':99999999999999999999999}|sizeBytes must be a whole number within 64 bits (a JSON number or a decimal string)",
            "seed an array|{'seed':[1]}|seed must be a whole number within 64 bits (a JSON number or a decimal string)",
            "gpu a boolean|{'gpu':true}|gpu must be a GPU index or UUID",
            "gpu blank|{'gpu':' '}|gpu must be a GPU index or UUID",
    })
    void refusesWhatDoesNotParse(String name, String body, String detail) {
        assertThatThrownBy(() -> Wire.parse(bytes(body), ImportRequest.class)).isInstanceOf(InvalidRequest.class)
                .hasMessage(detail);
    }

    @Test
    void notJsonSaysWhy() {
        assertThatThrownBy(() -> Wire.parse(bytes("{handle:"), ImportRequest.class))
                .hasMessageStartingWith("request body is not valid JSON: ");
        assertThatThrownBy(() -> Wire.parse(new byte[Wire.MAX_BODY + 1], ImportRequest.class))
                .hasMessage("request body of 16385 bytes is larger than 16384");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "missing handle|{'handleType':'FABRIC','sizeBytes':2097152}|handle is required: the 64-byte FABRIC handle as base64",
            "missing type|{'handle':'HANDLE','sizeBytes':2097152}|handleType is required: FABRIC",
            "POSIX_FD|{'handle':'HANDLE','handleType':'POSIX_FD','sizeBytes':2097152}|handleType must be FABRIC (only fabric handles travel over HTTP), got 'POSIX_FD'",
            "braces kept|{'handle':'HANDLE','handleType':'{x}${y}','sizeBytes':2097152}|handleType must be FABRIC (only fabric handles travel over HTTP), got '{x}${y}'",
            "missing size|{'handle':'HANDLE','handleType':'FABRIC'}|sizeBytes is required: the size the exporter allocated",
            "zero size|{'handle':'HANDLE','handleType':'FABRIC','sizeBytes':'0'}|sizeBytes must be positive, got 0",
            "63 bytes|{'handle':'" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" + "','handleType':'FABRIC','sizeBytes':1}|a FABRIC handle is exactly 64 bytes, got 62",
            "bad base64|{'handle':'!!','handleType':'FABRIC','sizeBytes':1}|handle is not valid base64: Illegal base64 character 21",
            "writeback without seed|{'handle':'HANDLE','handleType':'FABRIC','sizeBytes':1,'writebackSeed':5}|writebackSeed needs seed: write-back is only checked after a verified read",
            "two wrongs, the first field first|{'handleType':'POSIX_FD','sizeBytes':0}|handle is required: the 64-byte FABRIC handle as base64",
    })
    void refusesWhatBreaksAConstraint(String name, String body, String detail) {
        byte[] b = bytes(body.replace("HANDLE", HANDLE));
        assertThatThrownBy(() -> Wire.read(b, ImportRequest.class, VALIDATOR)).isInstanceOf(InvalidRequest.class)
                .hasMessage(detail);
    }

    @Test
    void theLadderTimeoutIsBounded() {
        assertThatThrownBy(() -> Wire.read(bytes("{'timeoutSeconds':181}"), LadderRequest.class, VALIDATOR))
                .hasMessage("timeoutSeconds must be 1..180 (the longest wait for one worker answer), got 181");
        assertThat(Wire.read(bytes("{'timeoutSeconds':'180'}"), LadderRequest.class, VALIDATOR).timeoutSeconds())
                .isEqualTo(180L);
    }
}
