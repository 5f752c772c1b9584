package dev.imexprobe.cli;

import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** JSON for the commands that run without Spring: the same rules as the agent's documents. */
final class Json {

    static final JsonMapper MAPPER = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private Json() {
    }

    static String write(Object value) {
        return MAPPER.writeValueAsString(value);
    }
}
