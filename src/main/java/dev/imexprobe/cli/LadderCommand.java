package dev.imexprobe.cli;

import dev.imexprobe.args.CommandLine;
import dev.imexprobe.json.Json;
import dev.imexprobe.ladder.Ladder;
import dev.imexprobe.ladder.LadderOptions;
import dev.imexprobe.ladder.LadderReport;
import dev.imexprobe.ladder.LadderTable;
import dev.imexprobe.node.AgentIdentity;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Set;

/**
 * {@code ladder [--json] [--gpus A,B] [--size BYTES] [--timeout S]}: the isolation ladder on this node. No
 * Spring; the report alone on stdout, logs on stderr. Exit codes as {@code check}: 0 every rung that ran
 * passed, 1 a rung failed, 2 could not tell (no driver, no GPU, the ladder itself could not run a rung).
 */
final class LadderCommand {

    static final String USAGE = "usage: java -jar imexprobe.jar ladder [--json] [--gpus A,B] [--size BYTES] "
            + "[--timeout 60s]\n  --gpus A,B   exporter GPU A, importer GPU B (indices with every GPU visible; "
            + "default 0 and the next)\n  --size BYTES bytes per allocation (default: GPU A's granularity)\n"
            + "  --timeout D  the longest to wait for any one worker answer (default 60s; a bare number is seconds)";

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
        CommandLine c = CommandLine.parse(args, Set.of("--json"), Set.of("--gpus", "--size", "--timeout"));
        Integer[] gpus = c.has("--gpus") ? LadderOptions.parseGpus(c.value("--gpus")) : new Integer[] {null, null};
        Duration timeout = c.duration("--timeout");
        // The CLI has no overall bound of its own beyond the default; a longer per-answer wait widens it.
        Duration budget = timeout != null && timeout.compareTo(LadderOptions.DEFAULT_BUDGET) > 0 ? timeout : null;
        return new Options(c.has("--json"), new LadderOptions(gpus[0], gpus[1], c.number("--size", 1, Long.MAX_VALUE),
                timeout, budget));
    }
}
