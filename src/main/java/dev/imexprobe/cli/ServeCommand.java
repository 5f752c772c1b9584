package dev.imexprobe.cli;

import dev.imexprobe.agent.AgentApplication;
import dev.imexprobe.agent.UnreadVariables;

import org.springframework.boot.SpringApplication;

import java.io.PrintStream;
import java.util.regex.Pattern;

/** {@code serve}: the Spring Boot agent. Returns -1: the JVM lives until the agent is stopped. */
final class ServeCommand {

    /**
     * What Spring reads from the command line: a property by its full (dotted) name with a value, or Spring Boot's
     * two switches. Anything else ({@code --port 9000}, {@code --port=9000}) Spring would ignore without a word, and
     * the agent would start on the default port: so it is refused, as every other command refuses what it does not
     * know.
     */
    private static final Pattern SETTING = Pattern.compile("--[A-Za-z][\\w-]*(\\.[\\w\\[\\]-]+)+=.*|--(debug|trace)(=.*)?",
            Pattern.DOTALL);

    private ServeCommand() {
    }

    static int run(String[] args, PrintStream err) {
        String refused = refusal(args);
        if (refused != null) {
            err.println(refused);
            Main.usage(err);
            return Main.USAGE;
        }
        SpringApplication app = new SpringApplication(AgentApplication.class);
        app.addListeners(new UnreadVariables());
        app.run(args);
        return -1;
    }

    /** Why {@code serve} refuses these arguments, or null when Spring may have them. */
    static String refusal(String[] args) {
        for (String arg : args) {
            if (!SETTING.matcher(arg).matches()) {
                return "serve: '" + arg + "' is not a setting. " + hint(arg);
            }
        }
        return null;
    }

    private static String hint(String arg) {
        String name = arg.replaceFirst("^-+", "").replaceFirst("=.*", "");
        if (name.equals("port") || name.equals("p")) {
            return "The port is --server.port=9000 (or SERVER_PORT=9000).";
        }
        return "serve takes settings by their full name with a value, --server.port=9000 or"
                + " --imexprobe.mesh.interval=10s, or as environment variables (SERVER_PORT, IMEXPROBE_MESH_INTERVAL);"
                + " docs/deploy.md (Values overview) lists them.";
    }
}
