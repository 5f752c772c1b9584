package dev.imexprobe.cli;

import dev.imexprobe.preflight.PreflightCommand;

import java.util.Arrays;

/**
 * The command line: {@code check}, {@code serve}, {@code ladder}, {@code worker}, {@code demo}, {@code preflight}.
 * Only {@code serve} and {@code preflight} start Spring; the others answer on stdout (reports only) and log to stderr.
 */
public final class Main {

    static final int USAGE = 64;

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length == 0) {
            usage();
            System.exit(USAGE);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        int code = switch (args[0]) {
            case "check" -> CheckCommand.run(rest, System.out);
            case "serve" -> ServeCommand.run(rest);
            case "ladder" -> LadderCommand.run(rest, System.out);
            case "worker" -> WorkerCommand.run(rest);
            case "demo" -> DemoCommand.run(rest, System.out);
            case "preflight" -> PreflightCommand.run(rest, System.out);
            case "help", "--help", "-h" -> {
                usage();
                yield 0;
            }
            default -> {
                System.err.println("unknown command '" + args[0] + "'");
                usage();
                yield USAGE;
            }
        };
        if (code >= 0) {
            System.exit(code);
        }
    }

    static void usage() {
        System.err.println("""
                usage: java -jar imexprobe.jar <command> [options]
                  check [--json] [--repeat N] [--size BYTES]   node report, self-probe and findings (exit 0 ok, 1 problem, 2 could not tell)
                  serve                                        the agent (REST, metrics, mesh); configured by imexprobe.* / IMEXPROBE_*
                  ladder [--json]                              the isolation ladder for same-node imports
                  preflight --expect N [--deadline 120s] [--json]
                                                               all-to-all imports between a job's pods, before the job (exit 0 pass, 1 fail, 2 could not tell)
                  demo [--nodes N] [--gpus-per-node M] [--domains D] [--port P] [--duration 20s]
                                                               a simulated cluster on the fake driver (no GPU needed): D NVLink
                                                               domains of N nodes × M GPUs plus one HGX-style node
                """);
    }
}
