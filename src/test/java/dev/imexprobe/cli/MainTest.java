package dev.imexprobe.cli;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    /** check, demo, ladder and preflight read options one way: either spelling, and each option once. */
    @RepeatedTest(8)
    void everyCommandRefusesAnOptionGivenTwiceAndTakesBothSpellings() {
        Map<String, java.util.function.Function<String[], Object>> commands = Map.of(
                "check", CheckCommand::parse, "demo", DemoCommand::parse, "ladder", LadderCommand::parse,
                "preflight", dev.imexprobe.preflight.PreflightOptions::parse);
        Map<String, List<String>> valid = Map.of("check", List.of("--repeat", "3", "--size", "2097152"),
                "demo", List.of("--nodes", "3", "--interval", "1s"),
                "ladder", List.of("--gpus", "0,1", "--timeout", "30s"),
                "preflight", List.of("--expect", "2", "--deadline", "45s"));
        for (String command : commands.keySet()) {
            List<String> pairs = valid.get(command);
            int which = random.nextInt(pairs.size() / 2) * 2;
            String name = pairs.get(which);
            String value = pairs.get(which + 1);
            List<String> args = new ArrayList<>(pairs);
            if (random.nextBoolean()) {
                args.set(which, name + "=" + value);
                args.remove(which + 1);
            }
            Object spelledEitherWay = commands.get(command).apply(args.toArray(String[]::new));
            assertThat(spelledEitherWay).as("%s %s", command, args)
                    .isEqualTo(commands.get(command).apply(pairs.toArray(String[]::new)));
            args.add(random.nextBoolean() ? 0 : args.size(), name + "=" + value);
            assertThatThrownBy(() -> commands.get(command).apply(args.toArray(String[]::new)))
                    .as("%s %s", command, args).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(name + " is given twice; give it once");
        }
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

    /**
     * {@code serve} refuses what Spring would silently ignore ({@code --port 9000} would start the agent on 8080), as
     * every other command refuses an unknown option: a usage error naming the argument, and no agent started (were
     * one started, the test would hang on its Spring context instead of returning 64).
     */
    @RepeatedTest(8)
    void serveRefusesWhatIsNotASettingAndStartsNothing() {
        List<String> wrong = List.of("--port", "9000", "-p", "--port=9000", "port=9000", "--interval=10s",
                "--server.port", "-Dserver.port=9000", "--=x", "--.port=1");
        String bad = wrong.get(random.nextInt(wrong.size()));
        List<String> args = new ArrayList<>(List.of("--server.port=" + (1024 + random.nextInt(60000)),
                "--imexprobe.mesh.interval=10s", "--debug"));
        args = new ArrayList<>(args.subList(0, random.nextInt(args.size() + 1)));
        args.add(random.nextInt(args.size() + 1), bad);
        args.addFirst("serve");
        assertThat(run(args)).as("%s", args).isEqualTo(Main.USAGE);
        String said = err.toString(StandardCharsets.UTF_8);
        assertThat(said).startsWith("serve: '" + bad + "' is not a setting.").contains("--server.port=9000")
                .contains("usage: java -jar imexprobe.jar");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void serveLetsSpringHaveSettingsByTheirFullNameAndItsTwoSwitches() {
        for (String ok : List.of("--server.port=9000", "--imexprobe.mesh.interval=10s", "--imexprobe.auth.token=",
                "--logging.level.dev.imexprobe=DEBUG", "--imexprobe.peers[0]=a:8080", "--debug", "--trace=true",
                "--spring.config.additional-location=file:/etc/imexprobe/")) {
            assertThat(ServeCommand.refusal(new String[] {ok})).as(ok).isNull();
        }
        assertThat(ServeCommand.refusal(new String[] {"--server.port=9000", "--port=1"}))
                .isEqualTo("serve: '--port=1' is not a setting. The port is --server.port=9000 (or SERVER_PORT=9000).");
        assertThat(ServeCommand.refusal(new String[] {"--imexprobe.mesh.interval", "10s"}))
                .startsWith("serve: '--imexprobe.mesh.interval' is not a setting. serve takes settings by their full name");
    }
}
