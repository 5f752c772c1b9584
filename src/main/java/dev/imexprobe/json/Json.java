package dev.imexprobe.json;

import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The one {@link JsonMapper} of the code that runs outside Spring's context: the commands, the ladder and its
 * workers, the parsers of other programs' output, Tomcat's error valve. Beans get Spring's own mapper injected.
 * Both keep Jackson's defaults, so a document reads the same whoever writes it; both call our records' creators
 * directly ({@link DirectCreators}; {@link JsonConfiguration} gives it to Spring's).
 */
public final class Json {

    public static final JsonMapper MAPPER = JsonMapper.builder().addModule(new DirectCreators()).build();

    /** Indented, for documents a person reads (the commands' --json output). */
    public static final ObjectWriter PRETTY = MAPPER.writer(SerializationFeature.INDENT_OUTPUT);

    private Json() {
    }
}
