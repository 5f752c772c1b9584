package dev.imexprobe.web;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.mock.http.MockHttpOutputMessage;
import org.springframework.mock.web.MockHttpServletResponse;

import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The document written outside MVC (filters, Tomcat's valve) is the one MVC writes for the same problem. */
class ProblemJsonTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void writesWhatMvcWrites() throws Exception {
        ProblemDetail p = ProblemJson.problem(HttpStatus.UNAUTHORIZED, "unauthorized", "no token");
        MockHttpOutputMessage mvc = new MockHttpOutputMessage();
        new JacksonJsonHttpMessageConverter().write(p, MediaType.APPLICATION_PROBLEM_JSON, mvc);
        MockHttpServletResponse response = new MockHttpServletResponse();
        ProblemJson.write(response, p);
        assertThat(response.getStatus()).isEqualTo(401);
        assertThat(response.getContentType()).isEqualTo("application/problem+json");
        assertThat(JSON.readTree(response.getContentAsByteArray())).isEqualTo(JSON.readTree(mvc.getBodyAsBytes()));
        assertThat(JSON.readTree(response.getContentAsByteArray()).toString()).isEqualTo("{\"type\":\"urn:imexprobe"
                + ":problem:unauthorized\",\"title\":\"Unauthorized\",\"status\":401,\"detail\":\"no token\"}");
    }

    @Test
    void codesOfStatusesRaisedBySpringOrTheContainer() {
        assertThat(ProblemJson.code(HttpStatus.BAD_REQUEST)).isEqualTo("invalid-input");
        assertThat(ProblemJson.code(HttpStatus.METHOD_NOT_ALLOWED)).isEqualTo("method-not-allowed");
        assertThat(ProblemJson.reason(599)).isEqualTo("HTTP 599");
    }
}
