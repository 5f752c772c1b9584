package dev.imexprobe.web;

import dev.imexprobe.peer.AgentSignature;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * /v1/imports passes two auth filters (one before DirectRoutes, one for the rest of /v1/*): the second lets on what
 * the first let through, with its body, and refuses what came to it unchecked.
 */
class AgentAuthFilterTest {

    private static final String TOKEN = "test-token-0123456789abcdef";

    private static MockHttpServletRequest post(String body, String authorization) {
        MockHttpServletRequest r = new MockHttpServletRequest("POST", "/v1/imports");
        r.setServletPath("/v1/imports");
        r.setContentType("application/json");
        r.setContent(body.getBytes(StandardCharsets.UTF_8));
        if (authorization != null) {
            r.addHeader("Authorization", authorization);
        }
        return r;
    }

    /** The servlet at the end: what body it read. */
    private static final class Reads extends HttpServlet {
        final List<String> bodies = new ArrayList<>();

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            bodies.add(new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            resp.setStatus(200);
        }
    }

    @Test
    void aRequestTheFirstFilterLetThroughPassesTheSecondWithItsBody() throws Exception {
        AgentSignature signature = new AgentSignature(TOKEN, Clock.systemUTC());
        String body = "{\"handle\":\"" + UUID.randomUUID() + "\"}";
        Reads servlet = new Reads();
        // The second one accepts nothing on its own: it has no token and requires one.
        MockFilterChain chain = new MockFilterChain(servlet, new AgentAuthFilter(signature, true),
                new AgentAuthFilter(null, true));
        MockHttpServletResponse response = new MockHttpServletResponse();
        chain.doFilter(post(body, signature.sign("POST", "/v1/imports", body.getBytes(StandardCharsets.UTF_8))),
                response);
        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(servlet.bodies).containsExactly(body);
    }

    @Test
    void aRequestNoFilterCheckedIsRefusedByEither() throws Exception {
        AgentSignature signature = new AgentSignature(TOKEN, Clock.systemUTC());
        for (boolean firstKnowsTheToken : new boolean[] {true, false}) {
            Reads servlet = new Reads();
            MockFilterChain chain = new MockFilterChain(servlet,
                    new AgentAuthFilter(firstKnowsTheToken ? signature : null, true),
                    new AgentAuthFilter(signature, true));
            MockHttpServletResponse response = new MockHttpServletResponse();
            MockHttpServletRequest request = post("{}", "Bearer wrong-token-wrong-token");
            request.setAttribute("unrelated", Boolean.TRUE);
            chain.doFilter(request, response);
            assertThat(response.getStatus()).as("first filter knows the token: %s", firstKnowsTheToken)
                    .isEqualTo(401);
            assertThat(servlet.bodies).isEmpty();
        }
    }

    /** A random body read whole, by its declared length or (chunked) up to the bound; more is refused. */
    @Test
    void aBodyIsReadWholeWithinItsBoundAndRefusedPastIt() throws Exception {
        Random random = new Random();
        int max = 256 + random.nextInt(4096);
        for (int i = 0; i < 200; i++) {
            byte[] body = new byte[random.nextInt(max * 2)];
            random.nextBytes(body);
            boolean chunked = random.nextBoolean();
            MockHttpServletRequest declared = new MockHttpServletRequest("POST", "/v1/imports");
            declared.setContent(body);
            HttpServletRequest request = !chunked ? declared : new HttpServletRequestWrapper(declared) {
                @Override
                public long getContentLengthLong() {
                    return -1;
                }
            };
            byte[] read = AgentAuthFilter.readBounded(request, max);
            if (body.length > max) {
                assertThat(read).as("%d bytes, bound %d, chunked %s", body.length, max, chunked).isNull();
                if (!chunked) {
                    assertThat(declared.getInputStream().readAllBytes()).as("a declared length over the bound is "
                            + "refused unread").isEqualTo(body);
                }
            } else {
                assertThat(read).as("%d bytes, bound %d, chunked %s", body.length, max, chunked).isEqualTo(body);
            }
        }
    }

    /**
     * A request refused here carries its route for http.server.requests (RouteTimer's attribute; the observation's
     * context where one is open), as MVC would have named it: random export ids; paths no route serves stay unnamed.
     */
    @Test
    void aRefusedRequestIsNamedByItsRouteAndOnlyByARouteThatExists() throws Exception {
        Random random = new Random();
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_.~%";
        for (int i = 0; i < 300; i++) {
            StringBuilder id = new StringBuilder();
            for (int n = 1 + random.nextInt(40); n > 0; n--) {
                id.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String[][] cases = {
                {"/v1/exports", "/v1/exports"}, {"/v1/imports", "/v1/imports"}, {"/v1/ladder", "/v1/ladder"},
                {"/v1/exports/" + id, "/v1/exports/{id}"}, {"/v1/exports/" + id + "/verify", "/v1/exports/{id}/verify"},
                {"/v1/exports/", null}, {"/v1/exports//verify", null}, {"/v1/exports/" + id + "/" + id, null},
                {"/v1/exports/" + id + "/verify/" + id, null}, {"/v1/exports/" + id + "/verifyx", null},
            };
            String[] c = cases[random.nextInt(cases.length)];
            MockHttpServletRequest request = new MockHttpServletRequest("POST", c[0]);
            request.setServletPath(c[0]);
            MockHttpServletResponse response = new MockHttpServletResponse();
            Reads servlet = new Reads();
            new MockFilterChain(servlet, new AgentAuthFilter(null, true)).doFilter(request, response);
            assertThat(response.getStatus()).as(c[0]).isEqualTo(401);
            assertThat(servlet.bodies).isEmpty();
            assertThat(request.getAttribute(RouteTimer.PATTERN)).as(c[0]).isEqualTo(c[1]);
        }
    }
}
