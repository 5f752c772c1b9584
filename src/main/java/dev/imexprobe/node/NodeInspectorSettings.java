package dev.imexprobe.node;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Where {@link NodeInspector} looks. Every root is injectable so tests (and the agent running on the fake driver)
 * can point the inspection at a fixture tree instead of the host's {@code /proc} and {@code /dev}.
 *
 * @param procRoot         procfs root ({@code /proc}): devices, driver/nvidia/params, version, gpus, hostname
 * @param devRoot          devtmpfs root ({@code /dev}): nvidia device nodes
 * @param imexChannelDir   directory holding {@code channelN}; the agent swaps in the fake driver's directory
 * @param imexConfig       the IMEX daemon's config.cfg
 * @param imexCtl          an explicit nvidia-imex-ctl; {@code null} = search {@link #imexCtlSearchPath()}
 * @param imexCtlSearchDirs directories searched for nvidia-imex-ctl; {@code null} = PATH from {@code env}, then
 *                         {@link #STANDARD_CTL_DIRS}
 * @param imexCtlTimeout   hard bound per nvidia-imex-ctl call (the tool is known to hang)
 * @param env              the environment (CUDA_VISIBLE_DEVICES, PATH, HOSTNAME)
 */
public record NodeInspectorSettings(
        Path procRoot,
        Path devRoot,
        Path imexChannelDir,
        Path imexConfig,
        Path imexCtl,
        List<Path> imexCtlSearchDirs,
        Duration imexCtlTimeout,
        Map<String, String> env) {

    public static final Path DEFAULT_PROC_ROOT = Path.of("/proc");
    public static final Path DEFAULT_DEV_ROOT = Path.of("/dev");
    public static final Path DEFAULT_IMEX_CHANNEL_DIR = Path.of("/dev/nvidia-caps-imex-channels");
    public static final Path DEFAULT_IMEX_CONFIG = Path.of("/etc/nvidia-imex/config.cfg");
    public static final Duration DEFAULT_IMEX_CTL_TIMEOUT = Duration.ofSeconds(3);
    /** Where the IMEX packages install the tool; searched after PATH because a DaemonSet's PATH is often minimal. */
    public static final List<Path> STANDARD_CTL_DIRS =
            List.of(Path.of("/usr/bin"), Path.of("/usr/sbin"), Path.of("/usr/local/bin"));
    public static final String IMEX_CTL_NAME = "nvidia-imex-ctl";

    public NodeInspectorSettings {
        Objects.requireNonNull(procRoot, "procRoot");
        Objects.requireNonNull(devRoot, "devRoot");
        Objects.requireNonNull(imexChannelDir, "imexChannelDir");
        Objects.requireNonNull(imexConfig, "imexConfig");
        Objects.requireNonNull(imexCtlTimeout, "imexCtlTimeout");
        Objects.requireNonNull(env, "env");
        if (imexCtlTimeout.isNegative() || imexCtlTimeout.isZero()) {
            throw new IllegalArgumentException("imexCtlTimeout must be positive, got " + imexCtlTimeout);
        }
        imexCtlSearchDirs = imexCtlSearchDirs == null ? null : List.copyOf(imexCtlSearchDirs);
        env = Map.copyOf(env);
    }

    /** The host's real locations and this process's environment. */
    public static NodeInspectorSettings defaults() {
        return new NodeInspectorSettings(DEFAULT_PROC_ROOT, DEFAULT_DEV_ROOT, DEFAULT_IMEX_CHANNEL_DIR,
                DEFAULT_IMEX_CONFIG, null, null, DEFAULT_IMEX_CTL_TIMEOUT, System.getenv());
    }

    public NodeInspectorSettings withProcRoot(Path value) {
        return new NodeInspectorSettings(value, devRoot, imexChannelDir, imexConfig, imexCtl, imexCtlSearchDirs,
                imexCtlTimeout, env);
    }

    public NodeInspectorSettings withDevRoot(Path value) {
        return new NodeInspectorSettings(procRoot, value, imexChannelDir, imexConfig, imexCtl, imexCtlSearchDirs,
                imexCtlTimeout, env);
    }

    public NodeInspectorSettings withImexChannelDir(Path value) {
        return new NodeInspectorSettings(procRoot, devRoot, value, imexConfig, imexCtl, imexCtlSearchDirs,
                imexCtlTimeout, env);
    }

    public NodeInspectorSettings withImexConfig(Path value) {
        return new NodeInspectorSettings(procRoot, devRoot, imexChannelDir, value, imexCtl, imexCtlSearchDirs,
                imexCtlTimeout, env);
    }

    public NodeInspectorSettings withImexCtl(Path value) {
        return new NodeInspectorSettings(procRoot, devRoot, imexChannelDir, imexConfig, value, imexCtlSearchDirs,
                imexCtlTimeout, env);
    }

    public NodeInspectorSettings withImexCtlSearchDirs(List<Path> value) {
        return new NodeInspectorSettings(procRoot, devRoot, imexChannelDir, imexConfig, imexCtl, value,
                imexCtlTimeout, env);
    }

    public NodeInspectorSettings withImexCtlTimeout(Duration value) {
        return new NodeInspectorSettings(procRoot, devRoot, imexChannelDir, imexConfig, imexCtl, imexCtlSearchDirs,
                value, env);
    }

    public NodeInspectorSettings withEnv(Map<String, String> value) {
        return new NodeInspectorSettings(procRoot, devRoot, imexChannelDir, imexConfig, imexCtl, imexCtlSearchDirs,
                imexCtlTimeout, value);
    }

    /** The directories searched for nvidia-imex-ctl, in order: PATH's entries, then the standard ones. */
    public List<Path> imexCtlSearchPath() {
        if (imexCtlSearchDirs != null) {
            return imexCtlSearchDirs;
        }
        Set<Path> dirs = new LinkedHashSet<>();
        String path = env.get("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                // An empty PATH element means the working directory; never run a tool found there.
                if (!dir.isBlank() && dir.startsWith("/")) {
                    dirs.add(Path.of(dir));
                }
            }
        }
        dirs.addAll(STANDARD_CTL_DIRS);
        return List.copyOf(dirs);
    }
}
