package dev.imexprobe.web;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import jakarta.servlet.ServletException;

import org.junit.jupiter.api.Test;
import org.springframework.http.server.observation.ServerRequestObservationContext;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.HandlerMapping;

import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** RouteTimer's tags for what the two routes can end in: answered, refused, thrown, answered by MVC. */
class RouteTimerTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RouteTimer timer = new RouteTimer(registry);

    @Test
    void anAnswerIsCountedUnderItsRouteStatusAndOutcome() throws Exception {
        int n = 1 + new Random().nextInt(5);
        for (int i = 0; i < n; i++) {
            MockHttpServletRequest request = new MockHttpServletRequest("GET", "/probe");
            timer.doFilter(request, new MockHttpServletResponse(), (req, res) -> {
                req.setAttribute(RouteTimer.PATTERN, "/probe");
                ((MockHttpServletResponse) res).setStatus(400);
            });
        }
        Timer t = only();
        assertThat(tags(t)).isEqualTo(Map.of("uri", "/probe", "method", "GET", "status", "400",
                "outcome", "CLIENT_ERROR", "exception", "none", "error", "none"));
        assertThat(t.count()).isEqualTo(n);
    }

    @Test
    void aThrownRequestIsA500NamingTheCauseAndStillThrows() {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/imports");
        MockHttpServletResponse response = new MockHttpServletResponse();
        assertThatThrownBy(() -> timer.doFilter(request, response, (req, res) -> {
            throw new ServletException(new IllegalStateException("boom"));
        })).isInstanceOf(ServletException.class);
        assertThat(response.getStatus()).isEqualTo(500);
        assertThat(tags(only())).containsEntry("status", "500").containsEntry("outcome", "SERVER_ERROR")
                .containsEntry("exception", "IllegalStateException").containsEntry("error", "IllegalStateException")
                .containsEntry("uri", "UNKNOWN");
    }

    @Test
    void mvcsPatternNamesTheRouteWhenMvcAnswered() throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/probe");
        timer.doFilter(request, new MockHttpServletResponse(), (req, res) ->
                req.setAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE, "/probe"));
        assertThat(tags(only())).containsEntry("uri", "/probe").containsEntry("status", "200");
    }

    @Test
    void theObservationIsOffForExactlyTheRequestsTimedHere() throws Exception {
        MockHttpServletRequest timed = new MockHttpServletRequest("GET", "/probe");
        timer.doFilter(timed, new MockHttpServletResponse(), (req, res) -> { });
        MockHttpServletRequest other = new MockHttpServletRequest("GET", "/v1/node");
        var predicate = RouteTimer.observedElsewhere();
        assertThat(predicate.test("http.server.requests",
                new ServerRequestObservationContext(timed, new MockHttpServletResponse()))).isFalse();
        assertThat(predicate.test("http.server.requests",
                new ServerRequestObservationContext(other, new MockHttpServletResponse()))).isTrue();
    }

    /** While a recording asks for it, each timed request is one imexprobe.Request event with Tomcat's start. */
    @Test
    void aRecordingSeesTheRequestFromTomcatsStartToItsAnswer() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("request", ".jfr");
        long parsed = System.nanoTime();
        try (jdk.jfr.Recording recording = new jdk.jfr.Recording()) {
            recording.enable("imexprobe.Request");
            recording.start();
            MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/imports");
            request.setAttribute(RouteTimer.PARSED, parsed);
            timer.doFilter(request, new MockHttpServletResponse(), (req, res) -> ((MockHttpServletResponse) res).setStatus(409));
            recording.stop();
            recording.dump(file);
        }
        var events = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getLong("parsedNanos") == parsed).toList(); // this request's, whatever else ran
        java.nio.file.Files.delete(file);
        assertThat(events).hasSize(1);
        var e = events.getFirst();
        assertThat(e.getString("route")).isEqualTo("POST /v1/imports");
        assertThat(e.getInt("status")).isEqualTo(409);
        assertThat(e.getLong("parsedNanos")).isEqualTo(parsed);
        assertThat(e.getLong("enteredNanos")).isGreaterThanOrEqualTo(parsed);
        assertThat(e.getLong("answeredNanos")).isGreaterThanOrEqualTo(e.getLong("enteredNanos"));
    }

    private Timer only() {
        assertThat(registry.getMeters()).hasSize(1);
        Meter m = registry.getMeters().getFirst();
        assertThat(m.getId().getName()).isEqualTo("http.server.requests");
        return (Timer) m;
    }

    private static Map<String, String> tags(Meter m) {
        Map<String, String> tags = new TreeMap<>();
        for (Tag t : m.getId().getTags()) {
            tags.put(t.getKey(), t.getValue());
        }
        return tags;
    }
}
