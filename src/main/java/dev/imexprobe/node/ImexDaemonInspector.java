package dev.imexprobe.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Inspects the local IMEX daemon: its config file, then {@code nvidia-imex-ctl -q} and {@code -N -j} run side by
 * side, so the whole part takes at most one ctl bound (plus the kill), never two.
 */
final class ImexDaemonInspector {

    /** The daemon's default when IMEX_NODE_CONFIG_FILE is unset (NVIDIA's IMEX guide). */
    static final Path DEFAULT_NODE_CONFIG = Path.of("/etc/nvidia-imex/nodes_config.cfg");

    private final Path config;
    private final Path explicitCtl;
    private final List<Path> searchPath;
    private final Duration timeout;

    ImexDaemonInspector(Path config, Path explicitCtl, List<Path> searchPath, Duration timeout) {
        this.config = config;
        this.explicitCtl = explicitCtl;
        this.searchPath = List.copyOf(searchPath);
        this.timeout = timeout;
    }

    ImexDaemon inspect() {
        List<String> errors = new ArrayList<>();
        // Present = exists; an unreadable file is present with config null and the reason in error.
        boolean configPresent = Files.exists(config);
        ImexConfig parsed = configPresent ? readConfig(errors) : null;
        Path ctl = findCtl(errors);
        String configPath = config.toString();
        String error = errors.isEmpty() ? null : String.join("; ", errors);

        if (ctl == null) {
            return !configPresent
                    ? new ImexDaemon(ImexDaemonState.NOT_INSTALLED,
                            "no " + NodeInspectorSettings.IMEX_CTL_NAME + " and no " + configPath
                                    + ": IMEX is not installed (single-node FABRIC works without it)",
                            configPath, false, null, null, null, null, null, error)
                    : new ImexDaemon(ImexDaemonState.CONFIG_ONLY,
                            configPath + " exists but no " + NodeInspectorSettings.IMEX_CTL_NAME
                                    + " was found; install the nvidia-imex package or mount the tool to ask the"
                                    + " daemon",
                            configPath, true, parsed, null, null, null, null, error);
        }

        ImexCtl tool = new ImexCtl(ctl, config, timeout);
        ImexCtlRun readiness;
        ImexCtlRun domainQuery;
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<ImexCtlRun> q = pool.submit(tool::query);
            Future<ImexCtlRun> n = pool.submit(tool::domainStatus);
            readiness = q.get();
            domainQuery = n.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return withState(ImexDaemonState.ERROR, "interrupted while running " + ctl, configPresent, parsed, ctl,
                    null, null, null, error);
        } catch (ExecutionException e) {
            String why = "running " + ctl + " failed: " + e.getCause();
            return withState(ImexDaemonState.ERROR, why, configPresent, parsed, ctl, null, null, null,
                    join(error, why));
        }

        ImexDomain domain = domainQuery.timedOut() || domainQuery.error() != null
                ? null : ImexDomainParser.parse(domainQuery.stdout());
        ImexDaemonState state;
        String detail;
        if (readiness.error() != null) {
            state = ImexDaemonState.ERROR;
            detail = readiness.error();
        } else if (readiness.timedOut()) {
            state = ImexDaemonState.TIMEOUT;
            detail = "nvidia-imex-ctl -q did not answer within " + timeout.toMillis() + " ms and was killed: "
                    + "the daemon's command service is not answering; check IMEX_CMD_ENABLED/IMEX_CMD_PORT and "
                    + "the nvidia-imex service log";
        } else if (readiness.stdout().strip().equalsIgnoreCase("READY")) {
            state = ImexDaemonState.READY;
            detail = "nvidia-imex-ctl -q printed READY";
        } else {
            state = ImexDaemonState.NOT_READY;
            detail = "nvidia-imex-ctl -q printed '" + oneLine(readiness) + "' (exit " + readiness.exitCode()
                    + "), not READY; see the nvidia-imex service log";
        }
        return withState(state, detail, configPresent, parsed, ctl, readiness, domainQuery, domain, error);
    }

    private ImexDaemon withState(ImexDaemonState state, String detail, boolean configPresent, ImexConfig parsed,
                                 Path ctl, ImexCtlRun readiness, ImexCtlRun domainQuery, ImexDomain domain,
                                 String error) {
        return new ImexDaemon(state, detail, config.toString(), configPresent, parsed, ctl.toString(), readiness,
                domainQuery, domain, error);
    }

    private Path findCtl(List<String> errors) {
        if (explicitCtl != null) {
            if (Files.isRegularFile(explicitCtl) && Files.isExecutable(explicitCtl)) {
                return explicitCtl;
            }
            errors.add("the configured " + NodeInspectorSettings.IMEX_CTL_NAME + " " + explicitCtl
                    + (Files.exists(explicitCtl) ? " is not an executable file" : " does not exist")
                    + "; fix the path or leave it unset to search PATH");
            return null;
        }
        for (Path dir : searchPath) {
            Path candidate = dir.resolve(NodeInspectorSettings.IMEX_CTL_NAME);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private ImexConfig readConfig(List<String> errors) {
        String text;
        try {
            text = new String(Files.readAllBytes(config), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | SecurityException e) {
            errors.add("cannot read " + config + ": " + DeviceFile.describe(e));
            return null;
        }
        return parseConfig(text);
    }

    /** KEY=VALUE lines with # comments, the format of /etc/nvidia-imex/config.cfg. */
    static ImexConfig parseConfig(String text) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            int eq = line.indexOf('=');
            if (line.isEmpty() || line.startsWith("#") || eq <= 0) {
                continue;
            }
            values.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip()); // the last one wins
        }
        List<String> problems = new ArrayList<>();
        Integer serverPort = port(values, "SERVER_PORT", problems);
        Integer cmdPort = port(values, "IMEX_CMD_PORT", problems);
        Boolean cmdEnabled = flag(values, "IMEX_CMD_ENABLED", problems);

        String nodeFile = values.get("IMEX_NODE_CONFIG_FILE");
        Path nodeConfig;
        if (nodeFile == null || nodeFile.isEmpty()) {
            nodeConfig = DEFAULT_NODE_CONFIG;
            problems.add("IMEX_NODE_CONFIG_FILE is not set; the daemon's default " + DEFAULT_NODE_CONFIG
                    + " is assumed");
        } else {
            nodeConfig = Path.of(nodeFile);
        }
        Integer addresses = null;
        String nodeError = null;
        if (!nodeConfig.isAbsolute()) {
            nodeError = "IMEX_NODE_CONFIG_FILE '" + nodeFile + "' is relative: it depends on the daemon's working "
                    + "directory; give an absolute path";
        } else {
            try {
                addresses = (int) Files.readAllLines(nodeConfig, StandardCharsets.ISO_8859_1).stream()
                        .map(String::strip)
                        .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                        .count();
            } catch (NoSuchFileException e) {
                nodeError = nodeConfig + " does not exist: the daemon cannot know the domain's members; write one"
                        + " address per line";
            } catch (IOException | SecurityException e) {
                nodeError = "cannot read " + nodeConfig + ": " + DeviceFile.describe(e);
            }
        }
        return new ImexConfig(serverPort, nodeConfig.toString(), addresses, nodeError, cmdPort, cmdEnabled,
                problems);
    }

    private static Integer port(Map<String, String> values, String key, List<String> problems) {
        String raw = values.get(key);
        if (raw == null || raw.isEmpty()) {
            return null;
        }
        try {
            int port = Integer.parseInt(raw);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        problems.add(key + "='" + raw + "' is not a TCP port (1-65535); fix it in the IMEX config");
        return null;
    }

    private static Boolean flag(Map<String, String> values, String key, List<String> problems) {
        String raw = values.get(key);
        if (raw == null || raw.isEmpty()) {
            return null;
        }
        return switch (raw.toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes" -> true;
            case "0", "false", "no" -> false;
            default -> {
                problems.add(key + "='" + raw + "' is not 0 or 1; fix it in the IMEX config");
                yield null;
            }
        };
    }

    private static String oneLine(ImexCtlRun run) {
        String text = run.stdout().strip();
        if (text.isEmpty()) {
            text = run.stderr().strip();
        }
        text = text.replaceAll("\\s+", " ");
        return text.length() > 200 ? text.substring(0, 200) + "…" : text;
    }

    private static String join(String a, String b) {
        return a == null ? b : a + "; " + b;
    }
}
