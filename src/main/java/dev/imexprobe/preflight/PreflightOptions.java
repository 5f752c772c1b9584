package dev.imexprobe.preflight;

import org.springframework.boot.convert.DurationStyle;

import java.time.Duration;

/**
 * {@code preflight --expect N [--deadline 120s] [--json]}: how many instances take part, itself included, and how
 * long to wait for them. Once they are all there, the exchange and the hand-over of results get the same time again.
 */
public record PreflightOptions(int expect, Duration deadline, boolean json) {

    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(120);

    public PreflightOptions {
        if (expect < 1) {
            throw new IllegalArgumentException("--expect must be at least 1 (the instances of the job, this one included)");
        }
        if (deadline.isNegative() || deadline.isZero()) {
            throw new IllegalArgumentException("--deadline must be positive, e.g. 120s");
        }
    }

    /** Parses the options; the message of an IllegalArgumentException names the option and what is wrong. */
    public static PreflightOptions parse(String[] args) {
        Integer expect = null;
        Duration deadline = DEFAULT_DEADLINE;
        boolean json = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--expect" -> expect = number(value(args, ++i, "--expect"));
                case "--deadline" -> deadline = duration(value(args, ++i, "--deadline"));
                default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
            }
        }
        if (expect == null) {
            throw new IllegalArgumentException("--expect N is required: how many instances take part, this one included");
        }
        return new PreflightOptions(expect, deadline, json);
    }

    private static String value(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[i];
    }

    private static int number(String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--expect takes a whole number, not '" + text + "'");
        }
    }

    /** Spring's forms: 120s, 2m, PT2M; a bare number is seconds. */
    private static Duration duration(String text) {
        try {
            return text.trim().matches("\\d+") ? Duration.ofSeconds(Long.parseLong(text.trim()))
                    : DurationStyle.detectAndParse(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--deadline takes a duration such as 120s or 2m, not '" + text + "'");
        }
    }
}
