package dev.imexprobe.cli;

import dev.imexprobe.preflight.PreflightCommand;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/**
 * The command line: {@code check}, {@code serve}, {@code ladder}, {@code worker}, {@code demo}, {@code preflight}.
 * Only {@code serve} and {@code preflight} start Spring; the others answer on stdout (reports only) and log to stderr.
 */
public final class Main {

    static final int USAGE = 64;
    /** The commands {@link #run} knows ({@code worker} is the ladder's own, so the usage leaves it out). */
    static final List<String> COMMANDS = List.of("check", "serve", "ladder", "worker", "demo", "preflight");

    private Main() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        if (code >= 0) {
            System.exit(code);
        }
    }

    /**
     * Runs a command; the exit code, or -1 for {@code serve}, which keeps running. {@code help}, {@code --help} or
     * {@code -h} alone, or {@code --help} or {@code -h} after a command, prints the usage on {@code out} and runs
     * nothing: {@code serve --help} must not start an agent. An unknown command is a usage error, with or without
     * {@code --help} after it.
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            usage(err);
            return USAGE;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        boolean help = isHelp(args[0]) || args[0].equals("help");
        if (!help && !COMMANDS.contains(args[0])) {
            // a typo stays an error with --help after it: a script's `imexprobe chek --help` must not read as fine
            err.println("unknown command '" + args[0] + "'");
            usage(err);
            return USAGE;
        }
        if (help || Arrays.stream(rest).anyMatch(Main::isHelp)) {
            usage(out);
            return 0;
        }
        return switch (args[0]) {
            case "check" -> CheckCommand.run(rest, out);
            case "serve" -> ServeCommand.run(rest, err);
            case "ladder" -> LadderCommand.run(rest, out);
            case "worker" -> WorkerCommand.run(rest);
            case "demo" -> DemoCommand.run(rest, out);
            case "preflight" -> PreflightCommand.run(rest, out);
            default -> throw new IllegalStateException("a command in COMMANDS without a case: " + args[0]);
        };
    }

    private static boolean isHelp(String arg) {
        return arg.equals("--help") || arg.equals("-h");
    }

    static void usage(PrintStream to) {
        to.println("""
                usage: java -jar imexprobe.jar <command> [options]
                  check [--json] [--repeat N] [--size BYTES]   node report, self-probe and findings (exit 0 ok, 1 problem, 2 could not tell);
                                               no self-probe on a GPU with less free memory than IMEXPROBE_DRIVER_MINFREEMEMORY (4GB)
                  serve [--name=value ...]                     the agent (REST, metrics, mesh); settings by full name (--server.port=9000)
                                               or as environment variables (SERVER_PORT, IMEXPROBE_*)
                  ladder [--json] [--gpus A,B] [--size BYTES] [--timeout 60s]
                                                               the isolation ladder for same-node imports
                  preflight --expect N [--deadline 120s] [--json]
                                                               all-to-all imports between a job's pods, before the job (exit 0 pass, 1 fail, 2 could not tell)
                  demo [--nodes N] [--gpus-per-node M] [--domains D] [--port P] [--duration 20s] [--interval 2s]
                                                               a simulated cluster on the fake driver (no GPU needed): D NVLink
                                                               domains of N nodes × M GPUs plus one HGX-style node
                  options of check, ladder, preflight and demo: --name value or --name=value, each at most once
                  help, or --help / -h after any command       this text (exit 0; nothing runs)
                """);
    }
}
