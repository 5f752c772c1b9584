package dev.imexprobe.preflight;

import dev.imexprobe.agent.AgentApplication;
import dev.imexprobe.json.Json;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;


import java.io.PrintStream;

/**
 * {@code preflight}: the agent started in the {@code preflight} profile (the same beans: discovery, peer client,
 * auth, stages, findings), one all-to-all exchange with the job's other instances, the report on stdout, the exit
 * code. Logs go to stderr. The context is closed before returning, which releases whatever is still exported.
 */
public final class PreflightCommand {

    public static final int USAGE = 64;

    private PreflightCommand() {
    }

    public static int run(String[] args, PrintStream out) {
        long started = System.nanoTime();
        PreflightOptions options;
        try {
            options = PreflightOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("preflight: " + e.getMessage());
            System.err.println("usage: java -jar imexprobe.jar preflight --expect N [--deadline 120s] [--json]");
            return USAGE;
        }
        PrintStream report = out;
        System.setOut(System.err); // Spring's console log; stdout carries only the report
        SpringApplication app = new SpringApplication(AgentApplication.class);
        app.setAdditionalProfiles(PreflightConfiguration.PROFILE);
        PreflightReport result;
        try (ConfigurableApplicationContext context = app.run()) {
            result = context.getBean(PreflightRun.class).run(options, started);
        }
        if (options.json()) {
            report.println(Json.PRETTY.writeValueAsString(result));
        } else {
            PreflightTable.print(report, result);
        }
        report.flush();
        return result.exitCode();
    }
}
