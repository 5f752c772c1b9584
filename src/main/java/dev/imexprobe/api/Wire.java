package dev.imexprobe.api;

import dev.imexprobe.json.Json;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.Path;
import jakarta.validation.Validator;

import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one reader of request bodies: bytes → record ({@link #parse}), record → its first broken constraint
 * ({@link #validate}), both as an {@link InvalidRequest} whose message is the problem's detail. Spring MVC reaches
 * it through the web layer's message converter and {@code @Valid}; any other path (a servlet, a functional
 * endpoint) calls {@link #read} and gets exactly the same answers.
 */
public final class Wire {

    /** The largest request body an agent reads; bigger ones are refused before they are in memory. */
    public static final int MAX_BODY = 16 * 1024;

    private static final byte[] EMPTY_OBJECT = {'{', '}'};
    private static final Map<Class<?>, ObjectReader> READERS = new ConcurrentHashMap<>();
    private static final Map<Class<?>, List<String>> COMPONENTS = new ConcurrentHashMap<>();

    private Wire() {
    }

    /** Parses and validates: the record, or an {@link InvalidRequest} naming the first thing wrong. */
    public static <T extends WireRequest> T read(byte[] body, Class<T> type, Validator validator) {
        T request = parse(body, type);
        validate(request, validator);
        return request;
    }

    /** The record a body holds (an absent or empty body is {@code {}}), its fields' JSON types checked. */
    public static <T extends WireRequest> T parse(byte[] body, Class<T> type) {
        if (body != null && body.length > MAX_BODY) {
            throw new InvalidRequest(tooLarge(body.length));
        }
        byte[] json = body == null || body.length == 0 ? EMPTY_OBJECT : body;
        T value;
        try {
            value = READERS.computeIfAbsent(type, t -> Json.MAPPER.readerFor(t)
                    .with(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                    .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)).readValue(json);
        } catch (UnrecognizedPropertyException e) {
            throw new InvalidRequest("unknown field '" + truncate(e.getPropertyName()) + "' (known: "
                    + String.join(", ", fields(type).stream().sorted().toList()) + ")");
        } catch (StreamReadException e) {
            throw new InvalidRequest("request body is not valid JSON: " + e.getOriginalMessage());
        } catch (JacksonException e) {
            InvalidRequest field = cause(e);
            if (field != null) {
                throw field;
            }
            throw new InvalidRequest(e.getPath().isEmpty() ? "request body must be a JSON object"
                    : "request body does not fit " + type.getSimpleName() + ": " + e.getOriginalMessage());
        } catch (InvalidRequest e) {
            throw e;
        }
        if (value == null) {
            throw new InvalidRequest("request body must be a JSON object");
        }
        return value;
    }

    /** Why a body over {@link #MAX_BODY} is refused; {@code declared} is its Content-Length, -1 when unknown. */
    public static String tooLarge(long declared) {
        return "request body of " + (declared > MAX_BODY ? declared + " bytes" : "more than " + MAX_BODY + " bytes")
                + " is larger than " + MAX_BODY;
    }

    /** Checks the record's constraints; the first broken one (in the record's field order) is the answer. */
    public static void validate(Object request, Validator validator) {
        Set<ConstraintViolation<Object>> violations = validator.validate(request);
        if (!violations.isEmpty()) {
            throw new InvalidRequest(first(request.getClass(), violations));
        }
    }

    /**
     * The message of the violation a caller should fix first: fields in the record's order, then the checks
     * that span fields (Bean Validation reports a set, in no order).
     */
    public static String first(Class<?> type, Iterable<? extends ConstraintViolation<?>> violations) {
        List<String> order = fields(type);
        ConstraintViolation<?> best = null;
        int bestRank = Integer.MAX_VALUE;
        for (ConstraintViolation<?> v : violations) {
            int rank = rank(order, v.getPropertyPath());
            if (best == null || rank < bestRank || rank == bestRank && v.getMessage().compareTo(best.getMessage()) < 0) {
                best = v;
                bestRank = rank;
            }
        }
        return best == null ? null : best.getMessage();
    }

    /** Where a field comes in the record (class-level checks last). */
    public static int rank(Class<?> type, String field) {
        int i = fields(type).indexOf(field);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    private static int rank(List<String> order, Path path) {
        Iterator<Path.Node> it = path.iterator();
        String name = it.hasNext() ? it.next().getName() : null;
        int i = name == null ? -1 : order.indexOf(name);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    /** The JSON field names of a request record, in declaration order. */
    public static List<String> fields(Class<?> type) {
        return COMPONENTS.computeIfAbsent(type, t -> t.isRecord()
                ? Arrays.stream(t.getRecordComponents()).map(RecordComponent::getName).toList() : List.of());
    }

    /** A constraint message that holds caller input: escaped so Bean Validation prints it as it is. */
    static String literal(String message) {
        StringBuilder b = new StringBuilder(message.length() + 8);
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            if (c == '\\' || c == '{' || c == '}' || c == '$') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.toString();
    }

    /** Caller input quoted in a message: at most 64 characters. */
    public static String truncate(String s) {
        return s.length() > 64 ? s.substring(0, 64) + "…" : s;
    }

    private static InvalidRequest cause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InvalidRequest r) {
                return r;
            }
        }
        return null;
    }

}
