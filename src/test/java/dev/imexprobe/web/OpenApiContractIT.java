package dev.imexprobe.web;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * openapi.yaml held against a running agent: every operation of the file answers (no 404/405) with a status the
 * file documents for it, every JSON answer validates against the schema the file gives for that status and media
 * type, and every request mapping of the application (read from its RequestMappingHandlerMapping through
 * /actuator/mappings, exposed for this agent only) is an operation of the file.
 */
class OpenApiContractIT {

    private static final String TOKEN = "Bearer " + AgentProcess.TOKEN;
    /** Mappings of the application that are not its API, and why. */
    private static final Map<String, String> NOT_API = Map.of(
            "/error", "Spring Boot's error page; errors reach clients as problem+json",
            "/webjars/**", "Spring Boot's default resource handler; no webjars are packaged",
            "/actuator/mappings", "exposed for this test only (MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE)");

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess agent;
    /** The target of the agent's probes: an agent refuses to probe itself. */
    static AgentProcess peer;
    static OpenApi api;

    @BeforeAll
    static void start() throws Exception {
        machine = FakeMachine.h200(dir.resolve("machine"));
        agent = AgentProcess.start("contract", dir, machine.env(), "node-contract", Map.of(
                "MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE", "health,info,prometheus,mappings")).awaitReady();
        peer = AgentProcess.start("contract-peer", dir, machine.env(), "node-contract-peer", Map.of()).awaitReady();
        AgentProcess.Reply served = agent.get("/openapi.yaml");
        assertThat(served.status()).isEqualTo(200);
        assertThat(served.body()).as("the agent serves the file in the repository")
                .isEqualTo(Files.readString(OpenApi.FILE.toAbsolutePath()));
        api = OpenApi.parse(served.body());
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(agent, peer);
    }

    /** One request to make and the status it must get. */
    record Call(String method, String path, String body, String auth, int expect) {
        static Call get(String path, int expect) {
            return new Call("GET", path, null, null, expect);
        }

        static Call post(String path, String body, int expect) {
            return new Call("POST", path, body, TOKEN, expect);
        }
    }

    @Test
    void everyOperationAnswersAsDocumentedAndEveryJsonAnswerValidates() {
        Map<String, List<Function<State, Call>>> calls = representativeCalls();
        State state = new State();
        List<String> problems = new ArrayList<>();
        Set<String> answered = new LinkedHashSet<>();
        for (OpenApi.Operation op : api.operations()) {
            List<Function<State, Call>> forOp = calls.get(op.key());
            if (forOp == null) {
                problems.add(op.key() + ": no representative call in this test; add one");
                continue;
            }
            boolean first = true;
            for (Function<State, Call> make : forOp) {
                Call c = make.apply(state);
                AgentProcess.Reply r = send(c);
                if (first) {
                    assertThat(r.status()).as("%s answers", op.key()).isNotIn(404, 405);
                    first = false;
                }
                String where = c.method() + " " + c.path() + " -> " + r.status();
                if (r.status() != c.expect()) {
                    problems.add(where + ": expected " + c.expect() + ": " + r);
                    continue;
                }
                problems.addAll(conform(op, r, where));
                answered.add(op.key() + " " + r.status());
                state.after(c, r);
            }
        }
        assertThat(problems).isEmpty();
        assertThat(answered).as("statuses seen").contains("GET /probe 200", "POST /v1/exports 201",
                "POST /v1/exports 200", "POST /v1/imports 200", "POST /v1/imports 401", "DELETE /v1/exports/{id} 404",
                "GET /probe 413", "GET /actuator/health/readiness 200");
    }

    /** Does a reply match what the file says for this operation and status? */
    private static List<String> conform(OpenApi.Operation op, AgentProcess.Reply r, String where) {
        List<String> problems = new ArrayList<>();
        JsonNode response = api.response(op, r.status());
        if (response == null) {
            problems.add(where + ": status not documented");
            return problems;
        }
        String mediaType = r.contentType().split(";")[0].trim().toLowerCase(Locale.ROOT);
        JsonNode media = response.path("content").get(mediaType);
        if (media == null) {
            problems.add(where + ": media type " + mediaType + " not documented (documented: "
                    + response.path("content").propertyNames() + ")");
            return problems;
        }
        if (mediaType.endsWith("json")) {
            for (String e : api.schemas.validate(media.get("schema"), r.json())) {
                problems.add(where + " " + e);
            }
        } else {
            assertThat(r.body()).as(where).isNotBlank();
        }
        for (Map.Entry<String, JsonNode> h : response.path("headers").properties()) {
            if (r.header(h.getKey()).isEmpty()) {
                problems.add(where + ": header " + h.getKey() + " missing");
            } else if (h.getValue().path("schema").has("const")) {
                assertThat(r.header(h.getKey())).as(where + " " + h.getKey())
                        .contains(h.getValue().get("schema").get("const").asString());
            }
        }
        return problems;
    }

    /** What earlier calls produced and later ones use. */
    static final class State {
        String exportId;
        String exportHandle;

        void after(Call c, AgentProcess.Reply r) {
            if (c.method().equals("POST") && c.path().equals("/v1/exports") && r.status() == 201) {
                exportId = r.json().get("id").asString();
                exportHandle = r.json().get("handle").asString();
            }
        }
    }

    private static Map<String, List<Function<State, Call>>> representativeCalls() {
        String self = agent.hostPort();
        String other = peer.hostPort();
        String garbage = Base64.getEncoder().encodeToString(new byte[64]);
        Map<String, List<Function<State, Call>>> m = new LinkedHashMap<>();
        m.put("GET /v1/node", List.of(s -> Call.get("/v1/node", 200), s -> Call.get("/v1/node?refresh=true", 200),
                s -> Call.get("/v1/node?refresh=perhaps", 400)));
        m.put("POST /v1/exports", List.of(
                s -> Call.post("/v1/exports", "{\"sizeBytes\":2097152,\"handleType\":\"FABRIC\",\"seed\":\"42\"}", 201),
                s -> {
                    agent.faults("cuMemCreate=800");
                    return Call.post("/v1/exports", "{}", 200);
                },
                s -> {
                    agent.clearFaults();
                    return Call.post("/v1/exports", "{\"sizeBytes\":3}", 400);
                },
                s -> Call.post("/v1/exports", "{\"sizeBytes\":2147483648}", 413),
                s -> new Call("POST", "/v1/exports", "{}", null, 401)));
        m.put("POST /v1/exports/{id}/verify", List.of(
                s -> Call.post("/v1/exports/" + s.exportId + "/verify", "{\"seed\":\"42\"}", 200),
                s -> Call.post("/v1/exports/" + s.exportId + "/verify", "{}", 400),
                s -> Call.post("/v1/exports/nope/verify", "{\"seed\":1}", 404),
                s -> new Call("POST", "/v1/exports/" + s.exportId + "/verify", "{\"seed\":1}", null, 401)));
        m.put("DELETE /v1/exports/{id}", List.of(
                s -> new Call("DELETE", "/v1/exports/" + s.exportId, null, null, 401),
                s -> new Call("DELETE", "/v1/exports/" + s.exportId, null, TOKEN, 200),
                s -> new Call("DELETE", "/v1/exports/" + s.exportId, null, TOKEN, 404)));
        m.put("POST /v1/imports", List.of(
                s -> Call.post("/v1/imports", "{\"handle\":\"" + garbage + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":"
                        + "2097152,\"seed\":1,\"writebackSeed\":2}", 200),
                s -> Call.post("/v1/imports", "{\"handle\":\"AAAA\",\"handleType\":\"FABRIC\",\"sizeBytes\":2097152}", 400),
                s -> Call.post("/v1/imports", "{\"handle\":\"" + garbage + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":"
                        + "4294967296}", 413),
                s -> new Call("POST", "/v1/imports", "{}", null, 401)));
        m.put("POST /v1/ladder", List.of(
                s -> new Call("POST", "/v1/ladder", "{}", null, 401),
                s -> Call.post("/v1/ladder", "{}", 404)));
        m.put("GET /probe", List.of(
                s -> Call.get("/probe?target=" + other, 200),
                s -> Call.get("/probe?target=" + other + "&direction=push&debug=true", 200),
                s -> Call.get("/probe?target=" + other + "&format=prometheus", 200),
                s -> Call.get("/probe?target=127.0.0.1:" + AgentProcess.freePort(), 200),
                s -> Call.get("/probe?target=" + self, 400),
                s -> Call.get("/probe?target=" + self + "&direction=up", 400),
                s -> Call.get("/probe?target=" + self + "&sizeBytes=4294967296", 413)));
        m.put("GET /v1/mesh", List.of(s -> Call.get("/v1/mesh", 200), s -> Call.get("/v1/mesh?scope=domain", 200),
                s -> Call.get("/v1/mesh?scope=galaxy", 400)));
        m.put("GET /", List.of(s -> Call.get("/", 200)));
        m.put("GET /openapi.yaml", List.of(s -> Call.get("/openapi.yaml", 200)));
        m.put("GET /actuator", List.of(s -> Call.get("/actuator", 200)));
        m.put("GET /actuator/health", List.of(s -> Call.get("/actuator/health", 200)));
        m.put("GET /actuator/health/liveness", List.of(s -> Call.get("/actuator/health/liveness", 200)));
        m.put("GET /actuator/health/readiness", List.of(s -> Call.get("/actuator/health/readiness", 200)));
        m.put("GET /actuator/prometheus", List.of(s -> Call.get("/actuator/prometheus", 200)));
        m.put("GET /actuator/info", List.of(s -> Call.get("/actuator/info", 200)));
        return m;
    }

    private static AgentProcess.Reply send(Call c) {
        HttpRequest.Builder b = HttpRequest.newBuilder(agent.uri(c.path())).method(c.method(),
                c.body() == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(c.body()));
        if (c.body() != null) {
            b.header("Content-Type", "application/json");
        }
        if (c.auth() != null) {
            b.header("Authorization", c.auth());
        }
        return agent.send(b, Duration.ofSeconds(60));
    }

    // ---- the application's mappings ----------------------------------------------------------------------------

    /** A request mapping as the running application has it: methods (empty: any) and a path pattern. */
    record Mapping(Set<String> methods, String pattern) {
    }

    static List<Mapping> mappings() {
        JsonNode doc = agent.get("/actuator/mappings").json();
        List<Mapping> out = new ArrayList<>();
        for (JsonNode context : doc.get("contexts")) {
            for (JsonNode m : context.get("mappings").get("dispatcherServlets").get("dispatcherServlet")) {
                JsonNode conditions = m.path("details").path("requestMappingConditions");
                if (!conditions.isMissingNode()) {
                    Set<String> methods = new LinkedHashSet<>();
                    conditions.get("methods").forEach(x -> methods.add(x.asString()));
                    conditions.get("patterns").forEach(p -> out.add(new Mapping(methods, p.asString())));
                } else {
                    // resource handlers: the predicate is the pattern
                    out.add(new Mapping(Set.of("GET"), m.get("predicate").asString()));
                }
            }
        }
        return out;
    }

    @Test
    void everyMappingOfTheApplicationIsInTheFile() {
        List<Mapping> mappings = mappings();
        assertThat(mappings).extracting(Mapping::pattern)
                .as("the application's controllers, read from the running agent")
                .contains("/v1/node", "/v1/exports", "/v1/exports/{id}/verify", "/v1/exports/{id}", "/v1/imports",
                        "/probe", "/v1/mesh", "/", "/actuator/health", "/actuator/prometheus");
        List<String> missing = new ArrayList<>();
        for (Mapping m : mappings) {
            if (NOT_API.containsKey(m.pattern())) {
                continue;
            }
            Set<String> methods = m.methods().isEmpty() ? Set.of("GET", "POST", "PUT", "DELETE", "PATCH") : m.methods();
            for (String method : methods) {
                boolean documented = api.operations().stream().anyMatch(op -> op.method().equals(method)
                        && covers(m.pattern(), op.path()));
                if (!documented) {
                    missing.add(method + " " + m.pattern());
                }
            }
        }
        assertThat(missing).as("mappings of the application that openapi.yaml does not document").isEmpty();
    }

    /** Does a spec path document a mapping pattern? Same template, or a concrete path under a ** pattern. */
    static boolean covers(String pattern, String specPath) {
        if (pattern.endsWith("/**")) {
            String base = pattern.substring(0, pattern.length() - 3);
            return specPath.startsWith(base + "/") || (base.isEmpty() && specPath.startsWith("/"));
        }
        return pattern.equals(specPath);
    }

    @Test
    void theMappingCheckCanFail() {
        // A controller mapping missing from the file must be found: check the check on a mapping that is not there.
        assertThat(api.operations().stream().anyMatch(op -> op.method().equals("POST")
                && covers("/v1/ladders", op.path()))).isFalse();
        assertThat(api.operations().stream().anyMatch(op -> op.method().equals("PUT")
                && covers("/v1/ladder", op.path()))).isFalse();
        assertThat(covers("/actuator/health/**", "/actuator/health/readiness")).isTrue();
        assertThat(covers("/actuator/health/**", "/actuator/healthz")).isFalse();
        assertThat(covers("/v1/exports/{id}", "/v1/exports/{id}")).isTrue();
    }
}
