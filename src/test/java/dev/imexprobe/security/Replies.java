package dev.imexprobe.security;

import dev.imexprobe.web.DocumentedAnswer;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/** What every answer of the agent must be, and the checks particular requests add. */
final class Replies {

    static final String PROBLEM_PREFIX = "urn:imexprobe:problem:";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Set<String> READ_ONLY_METHODS = Set.of("GET", "HEAD", "OPTIONS");

    private Replies() {
    }

    static JsonNode json(RawHttp.Reply reply) {
        return JSON.readTree(reply.body());
    }

    /** The start of a text with control characters made visible, for messages. */
    static String preview(String s) {
        String cut = s.length() > 300 ? s.substring(0, 300) + "…(" + s.length() + ")" : s;
        StringBuilder b = new StringBuilder();
        for (char c : cut.toCharArray()) {
            b.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return b.toString();
    }

    /**
     * The rules every answer follows, whatever was asked: never a 5xx; an error is problem+json of the Problem
     * schema in our namespace with the HTTP status in it; a request without a valid credential never gets a 2xx
     * from a method that could change anything; the documented operations answer as openapi.yaml says.
     */
    static List<String> violations(HostileRequests.Case c, RawHttp.Reply reply) {
        List<String> out = new ArrayList<>();
        String method = c.request().method();
        int status = reply.status();
        if (status >= 500 || status < 100) {
            out.add("status " + status);
        }
        if (!c.expect().isEmpty() && !c.expect().contains(status)) {
            out.add("status " + status + ", expected one of " + c.expect());
        }
        boolean head = method.equals("HEAD");
        if (status >= 400 && !head) {
            if (!reply.contentType().startsWith("application/problem+json")) {
                out.add("error answered as '" + reply.contentType() + "', not application/problem+json");
            } else {
                out.addAll(DocumentedAnswer.problemSchema(reply.text()));
                JsonNode p = json(reply);
                if (p.path("status").asInt() != status) {
                    out.add("problem status " + p.path("status") + " differs from HTTP " + status);
                }
                if (!p.path("type").asString("").startsWith(PROBLEM_PREFIX)) {
                    out.add("problem type " + p.path("type") + " not in " + PROBLEM_PREFIX);
                }
            }
        }
        if (head && status >= 400 && !reply.contentType().isEmpty()
                && !reply.contentType().startsWith("application/problem+json")) {
            out.add("HEAD error announced as '" + reply.contentType() + "'");
        }
        if (!c.credentialed() && status < 300 && !READ_ONLY_METHODS.contains(method.toUpperCase())) {
            out.add("a " + method + " without a valid credential was answered " + status);
        }
        if (c.operation() != null && !head && out.isEmpty()) {
            String[] op = c.operation().split(" ", 2);
            out.addAll(DocumentedAnswer.problems(op[0], op[1], status, reply.contentType(), reply.text()));
        }
        if (out.isEmpty() && c.check() != null) {
            try {
                c.check().accept(reply);
            } catch (AssertionError | RuntimeException e) {
                out.add(e.getMessage());
            }
        }
        return out;
    }

    // ---- checks of particular answers --------------------------------------------------------------------------

    static Consumer<RawHttp.Reply> verdict(String verdict) {
        return reply -> {
            if (reply.status() == 200) {
                String got = json(reply).path("verdict").asString("");
                if (!got.equals(verdict)) {
                    throw new AssertionError("verdict " + got + ", expected " + verdict);
                }
            }
        };
    }

    /** An import the driver refused: verdict fail at the import stage, with its CUresult. */
    static Consumer<RawHttp.Reply> importRefused() {
        return reply -> {
            if (reply.status() != 200) {
                return;
            }
            JsonNode doc = json(reply);
            JsonNode imp = doc.path("stages").path(0);
            if (!doc.path("verdict").asString("").equals("fail") || !imp.path("name").asString("").equals("import")
                    || !imp.path("status").asString("").equals("failed") || !imp.path("cuResult").isInt()) {
                throw new AssertionError("expected a refused import, got " + preview(reply.text()));
            }
        };
    }

    /** A 201 export of the asked size with a 64-byte handle, created and exported. */
    static Consumer<RawHttp.Reply> exported(long size) {
        return reply -> {
            JsonNode doc = json(reply);
            byte[] handle = Base64.getDecoder().decode(doc.path("handle").asString(""));
            if (handle.length != 64 || doc.path("sizeBytes").asLong() != size
                    || !doc.path("verdict").asString("").equals("pass") || doc.path("id").asString("").isEmpty()) {
                throw new AssertionError("not the export asked for (" + size + " bytes): " + preview(reply.text()));
            }
        };
    }

    static Consumer<RawHttp.Reply> probePassed() {
        return reply -> {
            boolean pass = reply.contentType().startsWith("text/plain") ? reply.text().contains("\nprobe_success 1.0\n")
                    : json(reply).path("verdict").asString("").equals("pass");
            if (!pass) {
                throw new AssertionError("the agent's probe of the other agent did not pass: " + preview(reply.text()));
            }
        };
    }

    /** A probe of the agent by itself: a 400 that says so (its import would run in the exporting process). */
    static Consumer<RawHttp.Reply> probeOfItselfRefused() {
        return reply -> {
            JsonNode doc = json(reply);
            if (!doc.path("type").asString("").equals(PROBLEM_PREFIX + "invalid-input")
                    || !doc.path("detail").asString("").contains(" is this agent itself (")) {
                throw new AssertionError("a probe of the agent itself was not refused as such: "
                        + preview(reply.text()));
            }
        };
    }

    /** Only the other agent can pass a probe here: every other target is closed, a stranger, or malformed. */
    static Consumer<RawHttp.Reply> probeNeverPassesElsewhere() {
        return reply -> {
            if (reply.status() != 200) {
                return;
            }
            boolean pass = reply.contentType().startsWith("text/plain") ? reply.text().contains("\nprobe_success 1.0\n")
                    : json(reply).path("verdict").asString("").equals("pass");
            if (pass) {
                throw new AssertionError("a probe of a target that is no agent passed: " + preview(reply.text()));
            }
        };
    }

    static Consumer<RawHttp.Reply> unauthorized() {
        return reply -> {
            if (reply.status() == 401) {
                if (!json(reply).path("type").asString("").equals(PROBLEM_PREFIX + "unauthorized")) {
                    throw new AssertionError("401 of type " + json(reply).path("type"));
                }
                if (!"Bearer, IMEXPROBE-HMAC".equals(reply.header("www-authenticate"))) {
                    throw new AssertionError("401 without 'WWW-Authenticate: Bearer, IMEXPROBE-HMAC'");
                }
            }
        };
    }

    /** Without a credential nothing that allocates, imports or runs may answer with its document. */
    static Consumer<RawHttp.Reply> nothingDoneWithoutCredentials(String method) {
        return reply -> {
            if (reply.status() >= 300 || reply.contentType().startsWith("application/problem+json")) {
                return;
            }
            String body = reply.text();
            if (body.contains("\"handle\"") || body.contains("\"stages\"") && !body.contains("\"results\"")
                    || body.contains("\"rungs\"")) {
                throw new AssertionError(method + " without credentials got an export, import or ladder document: "
                        + preview(body));
            }
        };
    }
}
