package dev.imexprobe.api;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.ValueDeserializer;

/**
 * How each kind of field is read from JSON, with the message that names the field and what it takes. JSON null
 * is an absent field (these are not called for it).
 */
final class Fields {

    private Fields() {
    }

    /** A string and nothing else: a number is not silently turned into text. */
    static final class Text extends ValueDeserializer<String> {
        @Override
        public String deserialize(JsonParser p, DeserializationContext ctxt) throws JacksonException {
            if (p.currentToken() != JsonToken.VALUE_STRING) {
                throw new InvalidRequest(name(p) + " must be a string");
            }
            return p.getString();
        }
    }

    /** A whole number given as a JSON number or a decimal string (64-bit values do not survive JavaScript). */
    static final class WholeNumber extends ValueDeserializer<Long> {
        @Override
        public Long deserialize(JsonParser p, DeserializationContext ctxt) throws JacksonException {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NUMBER_INT && (p.getNumberType() == JsonParser.NumberType.INT
                    || p.getNumberType() == JsonParser.NumberType.LONG)) {
                return p.getLongValue();
            }
            if (t == JsonToken.VALUE_STRING) {
                try {
                    return Long.parseLong(p.getString().trim());
                } catch (NumberFormatException e) {
                    // the message below
                }
            }
            throw new InvalidRequest(name(p) + " must be a whole number within 64 bits (a JSON number or a decimal "
                    + "string)");
        }
    }

    /** A GPU by index (a number or digits) or by UUID ("GPU-…"), kept as the text the node resolves. */
    static final class GpuRef extends ValueDeserializer<String> {
        @Override
        public String deserialize(JsonParser p, DeserializationContext ctxt) throws JacksonException {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
                return Integer.toString(p.getIntValue());
            }
            if (t == JsonToken.VALUE_STRING && !p.getString().isBlank()) {
                return p.getString().trim();
            }
            throw new InvalidRequest(name(p) + " must be a GPU index or UUID");
        }
    }

    private static String name(JsonParser p) {
        String n = p.currentName();
        return n != null ? n : "a field";
    }
}
