package dev.imexprobe.args;

import org.springframework.boot.convert.DurationStyle;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The options of one command (check, demo, ladder, preflight), read the same way for all: flags, and options with a
 * value as {@code --name value} or {@code --name=value}. Each at most once: a second {@code --repeat 3} used to win
 * over the first without a word, which a script that builds its command line from parts never notices. Every
 * refusal is an IllegalArgumentException whose message names the option and what is wrong; the command turns it into
 * a usage error (exit 64) before it touches anything.
 */
public final class CommandLine {

    private static final String FLAG = "";

    private final Map<String, String> given;

    private CommandLine(Map<String, String> given) {
        this.given = given;
    }

    /**
     * @param flags   options that take no value ({@code --json})
     * @param options options that take one value
     */
    public static CommandLine parse(String[] args, Set<String> flags, Set<String> options) {
        Map<String, String> given = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            int eq = arg.startsWith("--") ? arg.indexOf('=') : -1;
            String name = eq > 0 ? arg.substring(0, eq) : arg;
            String value;
            if (flags.contains(name)) {
                if (eq > 0) {
                    throw new IllegalArgumentException(name + " takes no value, got '" + arg + "'");
                }
                value = FLAG;
            } else if (options.contains(name)) {
                if (eq > 0) {
                    value = arg.substring(eq + 1);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException(name + " needs a value");
                }
            } else {
                throw new IllegalArgumentException("unknown option '" + arg + "'");
            }
            if (given.putIfAbsent(name, value) != null) {
                throw new IllegalArgumentException(name + " is given twice; give it once");
            }
        }
        return new CommandLine(given);
    }

    public boolean has(String name) {
        return given.containsKey(name);
    }

    /** The option's value as given; null when absent. */
    public String value(String name) {
        return given.get(name);
    }

    /** A whole number from {@code min} to {@code max}; null when absent. */
    public Long number(String name, long min, long max) {
        String v = given.get(name);
        if (v == null) {
            return null;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        String what = min != 1 ? "a whole number from " + min + " to " + max
                : max == Long.MAX_VALUE ? "a positive whole number"
                : max == Integer.MAX_VALUE ? "a positive whole number (at most " + max + ")"
                : "a whole number from 1 to " + max;
        throw new IllegalArgumentException(name + " needs " + what + ", got '" + v + "'");
    }

    /** A positive duration in Spring's forms (20s, 500ms, 2m, PT2M), a bare number being seconds; null when absent. */
    public Duration duration(String name) {
        String v = given.get(name);
        if (v == null) {
            return null;
        }
        String t = v.trim();
        try {
            Duration d = t.matches("\\d+") ? Duration.ofSeconds(Long.parseLong(t)) : DurationStyle.detectAndParse(t);
            if (!d.isNegative() && !d.isZero()) {
                return d;
            }
        } catch (IllegalArgumentException | ArithmeticException e) {
            // said below
        }
        throw new IllegalArgumentException(name + " needs a positive duration such as 20s, 2m or 500ms, got '" + v
                + "'");
    }
}
