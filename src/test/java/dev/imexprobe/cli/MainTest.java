package dev.imexprobe.cli;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line's own answers: help wherever it is asked for, and usage errors for what is not a command. */
class MainTest {

    private static final List<String> COMMANDS = Main.COMMANDS;
    private final Random random = new Random();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(List<String> args) {
        return Main.run(args.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /**
     * {@code --help} or {@code -h} after any command, among its other options, prints the usage on stdout and runs
     * nothing: {@code serve --help} on a GPU node must not start an agent, {@code check --help} not probe the GPU.
     */
    @RepeatedTest(12)
    void helpAfterAnyCommandPrintsTheUsageAndRunsNothing() {
        String command = COMMANDS.get(random.nextInt(COMMANDS.size()));
        List<String> args = new ArrayList<>(List.of("--json", "--nodes", "3", "--expect", "2"));
        args = new ArrayList<>(args.subList(0, random.nextInt(args.size() + 1)));
        args.add(random.nextInt(args.size() + 1), random.nextBoolean() ? "--help" : "-h");
        args.addFirst(command);
        assertThat(run(args)).as("%s", args).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("usage: java -jar imexprobe.jar <command>")
                .contains("check [--json]", "preflight --expect N", "demo [--nodes N]");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void helpAloneIsTheUsageOnStdout() {
        for (String help : List.of("help", "--help", "-h")) {
            out.reset();
            assertThat(run(List.of(help))).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("usage: java -jar imexprobe.jar");
        }
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void anUnknownCommandOrNoneIsAUsageErrorOnStderr() {
        String unknown = "probe" + random.nextInt(1000);
        assertThat(run(List.of(unknown, "--json"))).isEqualTo(Main.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("unknown command '" + unknown + "'")
                .contains("usage: java -jar imexprobe.jar");
        err.reset();
        // --help after a typo does not turn it into a success: a script checking the exit code learns of the typo
        String typo = COMMANDS.get(random.nextInt(COMMANDS.size())) + "x";
        assertThat(run(List.of(typo, random.nextBoolean() ? "--help" : "-h"))).isEqualTo(Main.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("unknown command '" + typo + "'")
                .contains("usage: java -jar imexprobe.jar");
        err.reset();
        assertThat(run(List.of())).isEqualTo(Main.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("usage: java -jar imexprobe.jar");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }
}
