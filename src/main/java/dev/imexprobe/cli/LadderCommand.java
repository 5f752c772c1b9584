package dev.imexprobe.cli;

import dev.imexprobe.json.Json;
import dev.imexprobe.ladder.Ladder;
import dev.imexprobe.ladder.LadderOptions;
import dev.imexprobe.ladder.LadderReport;
import dev.imexprobe.ladder.LadderTable;
import dev.imexprobe.node.AgentIdentity;

import java.io.PrintStream;
import java.time.Duration;

/**
 * {@code ladder [--json] [--gpus A,B] [--size BYTES] [--timeout S]}: the isolation ladder on this node. No
 * Spring; the report alone on stdout, logs on stderr. Exit codes as {@code check}: 0 every rung that ran
 * passed, 1 a rung failed, 2 could not tell (no driver, no GPU, the ladder itself could not run a rung).
 */
final class LadderCommand {

    static final String USAGE = "usage: java -jar imexprobe.jar ladder [--json] [--gpus A,B] [--size BYTES] "
            + "[--timeout S]\n  --gpus A,B   exporter GPU A, importer GPU B (indices with every GPU visible; "
            + "default 0 and the next)\n  --size BYTES bytes per allocation (default: GPU A's granularity)\n"
            + "  --timeout S  the longest to wait for any one worker answer (default 60)";

    private LadderCommand() {
    }

    record Options(boolean json, LadderOptions ladder) {
    }

    static int run(String[] args, PrintStream out) {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ladder: " + e.getMessage() + "\n" + USAGE);
            return Main.USAGE;
        }
        LadderReport report;
        try {
            report = Ladder.forThisProcess(AgentIdentity.create(System.getenv("IMEXPROBE_NODE_NAME")).node())
                    .run(options.ladder());
        } catch (IllegalArgumentException e) {
            // A GPU the node does not have: known only once the first worker has counted them.
            System.err.println("ladder: " + e.getMessage());
            return Main.USAGE;
        }
        if (options.json()) {
            out.println(Json.PRETTY.writeValueAsString(report));
        } else {
            LadderTable.print(report, out);
        }
        return report.exitCode();
    }

    static Options parse(String[] args) {
        boolean json = false;
        Integer[] gpus = {null, null};
        Long size = null;
        Duration timeout = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--gpus" -> gpus = LadderOptions.parseGpus(value(args, ++i, "--gpus"));
                case "--size" -> size = positive(value(args, ++i, "--size"), "--size");
                case "--timeout" -> timeout = Duration.ofSeconds(positive(value(args, ++i, "--timeout"), "--timeout"));
                default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
            }
        }
        // The CLI has no overall bound of its own beyond the default; a longer per-answer wait widens it.
        Duration budget = timeout != null && timeout.compareTo(LadderOptions.DEFAULT_BUDGET) > 0 ? timeout : null;
        return new Options(json, new LadderOptions(gpus[0], gpus[1], size, timeout, budget));
    }

    private static String value(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[i];
    }

    private static long positive(String text, String name) {
        try {
            long v = Long.parseLong(text.trim());
            if (v < 1) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a positive whole number, got '" + text + "'");
        }
    }
}
