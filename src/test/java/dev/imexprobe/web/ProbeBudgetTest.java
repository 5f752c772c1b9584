package dev.imexprobe.web;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProbeBudgetTest {

    private final Random random = new Random();
    private final Duration max = Duration.ofSeconds(5 + random.nextInt(60));
    private final ProbeBudget budget = new ProbeBudget(max);

    @Test
    void withNothingGivenTheMaximum() {
        assertThat(budget.of(null, null)).isEqualTo(max);
        assertThat(budget.of(" ", "")).isEqualTo(max);
    }

    @Test
    void theScrapeTimeoutLessBlackboxsOffset() {
        int s = 2 + random.nextInt(3);
        assertThat(budget.of(null, Integer.toString(s))).isEqualTo(Duration.ofSeconds(s).minusMillis(500));
        assertThat(budget.of(null, "2.5")).isEqualTo(Duration.ofMillis(2000));
        // a scrape timeout of a second or less keeps half of itself, never nothing
        assertThat(budget.of(null, "0.6")).isEqualTo(Duration.ofMillis(300));
        assertThat(budget.of(null, "1")).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void theParameterWinsOverTheHeaderAndTheMaximumCapsBoth() {
        long ms = 1 + random.nextInt(4000);
        assertThat(budget.of(ms + "ms", "30")).isEqualTo(Duration.ofMillis(ms));
        assertThat(budget.of("1.5s", null)).isEqualTo(Duration.ofMillis(1500));
        assertThat(budget.of("3", null)).isEqualTo(Duration.ofSeconds(3));
        assertThat(budget.of("2m", null)).isEqualTo(max);
        assertThat(budget.of(null, "100000")).isEqualTo(max);
    }

    @Test
    void anythingElseIsRefusedWithTheFormsItTakes() {
        for (String bad : List.of("abc", "-1", "1h", "1e3", "0", "0.0001ms", "1 s", "9999999999")) {
            assertThatThrownBy(() -> budget.of(bad, null)).as(bad).isInstanceOf(ApiException.class)
                    .hasMessageStartingWith("timeout must be");
        }
        assertThatThrownBy(() -> budget.of(null, "soon")).isInstanceOf(ApiException.class)
                .hasMessageStartingWith("X-Prometheus-Scrape-Timeout-Seconds must be");
    }
}
