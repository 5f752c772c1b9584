package dev.imexprobe.cli;

import dev.imexprobe.cuda.JniCudaDriver;
import dev.imexprobe.ladder.Worker;
import dev.imexprobe.probe.DriverExecutor;
import dev.imexprobe.probe.StageEngine;


import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** {@code worker}: internal, started by the ladder (and tests); speaks JSON lines on stdin/stdout. */
final class WorkerCommand {

    private WorkerCommand() {
    }

    static int run(String[] args) {
        Duration timeout = Duration.ofSeconds(args.length > 0 && args[0].startsWith("--timeout=")
                ? Long.parseLong(args[0].substring("--timeout=".length())) : 5);
        try (DriverExecutor executor = new DriverExecutor(2, timeout)) {
            new Worker(JniCudaDriver.get(), new StageEngine(executor))
                    .serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), System.out);
            return 0;
        } catch (IOException e) {
            System.err.println("worker: " + e.getMessage());
            return 1;
        }
    }
}
