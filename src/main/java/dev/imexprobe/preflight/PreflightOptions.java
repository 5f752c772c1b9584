package dev.imexprobe.preflight;

import dev.imexprobe.args.CommandLine;

import java.time.Duration;
import java.util.Set;

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
        CommandLine c = CommandLine.parse(args, Set.of("--json"), Set.of("--expect", "--deadline"));
        Long expect = c.number("--expect", 1, Integer.MAX_VALUE);
        if (expect == null) {
            throw new IllegalArgumentException("--expect N is required: how many instances take part, this one included");
        }
        Duration deadline = c.has("--deadline") ? c.duration("--deadline") : DEFAULT_DEADLINE;
        return new PreflightOptions(expect.intValue(), deadline, c.has("--json"));
    }
}
