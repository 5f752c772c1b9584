package dev.imexprobe.ladder;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Starts {@code worker} processes for the ladder: the same java as this process (never a {@code java} from the
 * PATH), the same jar or class path, and this process's environment without CUDA_VISIBLE_DEVICES (rungs 0–2 see
 * every GPU; rungs 3–4 set it per process).
 */
public final class WorkerLauncher {

    private final List<String> workerCommand;
    private final Map<String, String> environment;

    /**
     * @param workerCommand the command line of a worker with nothing hidden
     * @param environment   the environment workers start from (the ladder's own, or a test machine's)
     */
    public WorkerLauncher(List<String> workerCommand, Map<String, String> environment) {
        this.workerCommand = List.copyOf(workerCommand);
        Map<String, String> env = new LinkedHashMap<>(environment);
        env.remove("CUDA_VISIBLE_DEVICES");
        this.environment = Map.copyOf(env);
    }

    /** Workers like this JVM: its java, its jar (java -jar) or class path, its tmpdir. */
    public static WorkerLauncher forThisJvm(Map<String, String> environment) {
        return new WorkerLauncher(thisJvmWorkerCommand(), environment);
    }

    static List<String> thisJvmWorkerCommand() {
        String java = ProcessHandle.current().info().command().orElseThrow(() -> new IllegalStateException(
                "cannot tell which java runs this process (ProcessHandle.info().command() is empty), so no worker "
                        + "can be started; run the ladder with a JDK that reports it (Temurin 25 does)"));
        String classPath = System.getProperty("java.class.path", "");
        // Fast start matters more than peak speed: a worker runs a handful of driver calls.
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-XX:-UsePerfData",
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir")));
        if (!classPath.contains(File.pathSeparator) && classPath.endsWith(".jar")) {
            // The Boot jar keeps our classes under BOOT-INF: only its own launcher finds them.
            cmd.addAll(List.of("-jar", Path.of(classPath).toAbsolutePath().toString()));
        } else {
            cmd.addAll(List.of("-cp", classPath, "dev.imexprobe.cli.Main"));
        }
        cmd.add("worker");
        return List.copyOf(cmd);
    }

    /**
     * Starts one worker under an isolation; its stderr goes to {@code name.log} in workDir.
     *
     * @param driverTimeoutSeconds the worker's deadline for each driver call
     */
    LadderWorker start(String name, Isolation isolation, Path workDir, int driverTimeoutSeconds)
            throws LadderWorker.WorkerFailure {
        Map<String, String> env = new LinkedHashMap<>(environment);
        env.putAll(isolation.env());
        List<String> worker = new ArrayList<>(workerCommand);
        worker.add("--timeout=" + driverTimeoutSeconds);
        Path stage = workDir.resolve("ns-" + name);
        if (isolation.needsNamespace()) {
            try {
                Files.createDirectories(stage);
            } catch (IOException e) {
                throw new LadderWorker.WorkerFailure("cannot create " + stage + " for the " + name
                        + " worker's mount namespace: " + e.getMessage());
            }
        }
        return LadderWorker.start(name, isolation.command(worker, stage), env, workDir.resolve(name + ".log"));
    }
}
