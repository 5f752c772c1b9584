package dev.imexprobe.web;

import dev.imexprobe.api.Wire;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long one on-demand probe may take, as blackbox_exporter decides it: the caller's {@code timeout=} if given,
 * else Prometheus' {@code X-Prometheus-Scrape-Timeout-Seconds} less {@link #OFFSET} (so the answer is back before
 * Prometheus gives up), else the maximum; never more than {@code imexprobe.probe.maxtimeout}.
 */
final class ProbeBudget {

    static final String SCRAPE_TIMEOUT = "X-Prometheus-Scrape-Timeout-Seconds";
    /** blackbox_exporter's default --timeout-offset. */
    static final Duration OFFSET = Duration.ofMillis(500);
    private static final Pattern DURATION = Pattern.compile("([0-9]{1,9}(?:\\.[0-9]{1,9})?)(ms|s|m)?");

    private final Duration max;

    ProbeBudget(Duration max) {
        this.max = max;
    }

    Duration of(String timeout, String scrapeTimeout) {
        Duration d;
        if (timeout != null && !timeout.isBlank()) {
            d = parse(timeout, "timeout");
        } else if (scrapeTimeout != null && !scrapeTimeout.isBlank()) {
            Duration scrape = parse(scrapeTimeout + "s", SCRAPE_TIMEOUT);
            // a short scrape timeout keeps half of itself rather than nothing
            d = scrape.compareTo(OFFSET.multipliedBy(2)) > 0 ? scrape.minus(OFFSET) : scrape.dividedBy(2);
        } else {
            d = max;
        }
        return d.compareTo(max) > 0 ? max : d;
    }

    private static Duration parse(String value, String name) {
        Matcher m = DURATION.matcher(value.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw ApiException.invalid(name + " must be a positive duration such as 2.5s, 500ms or 3 (seconds), got '"
                    + Wire.truncate(value) + "'");
        }
        double n = Double.parseDouble(m.group(1));
        double millis = switch (m.group(2) == null ? "s" : m.group(2)) {
            case "ms" -> n;
            case "m" -> n * 60_000;
            default -> n * 1000;
        };
        if (millis < 1) {
            throw ApiException.invalid(name + " must be at least 1 ms, got '" + Wire.truncate(value) + "'");
        }
        return Duration.ofMillis((long) Math.min(millis, Long.MAX_VALUE / 2));
    }
}
