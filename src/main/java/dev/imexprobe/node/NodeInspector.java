package dev.imexprobe.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Inspects what a node can tell about IMEX without the CUDA driver: channels, kernel module parameters, device
 * nodes, the IMEX daemon and CUDA_VISIBLE_DEVICES. Plain Java (the {@code check} command starts no Spring
 * context). No method throws: a part that fails reports its error inside its own record.
 */
public final class NodeInspector {

    private final NodeInspectorSettings settings;
    private final boolean openChannels;

    public NodeInspector(NodeInspectorSettings settings) {
        this(settings, true);
    }

    /** @param openChannels false in observer mode: IMEX channels are listed and stat()ed, never opened */
    public NodeInspector(NodeInspectorSettings settings, boolean openChannels) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.openChannels = openChannels;
    }

    public NodeInspectorSettings settings() {
        return settings;
    }

    /** All parts, each independent of the others. Takes at most about one nvidia-imex-ctl bound. */
    public NodeFacts inspect() {
        Instant start = Instant.now();
        long t0 = System.nanoTime();
        String hostname = hostname();
        ImexChannels channels = imexChannels();
        DriverParams params = driverParams();
        DeviceNodes nodes = deviceNodes();
        VisibleDevices visible = visibleDevices();
        ImexDaemon daemon = imexDaemon();
        return new NodeFacts(hostname, start, (System.nanoTime() - t0) / 1e9, channels, params, nodes, daemon,
                visible);
    }

    /** The channel directory; cheap, so the agent may call it every interval (the fake's directory changes). */
    public ImexChannels imexChannels() {
        String dir = settings.imexChannelDir().toString();
        return guarded("IMEX channels", () -> new ImexChannelReader(settings.imexChannelDir(),
                settings.procRoot(), openChannels).read(), error -> ImexChannels.failed(dir, error));
    }

    public DriverParams driverParams() {
        return guarded("driver params", () -> new DriverParamsReader(settings.procRoot()).read(),
                DriverParams::failed);
    }

    public DeviceNodes deviceNodes() {
        String dev = settings.devRoot().toString();
        return guarded("device nodes", () -> new DeviceNodeReader(settings.devRoot()).read(),
                error -> DeviceNodes.failed(dev, error));
    }

    /** Runs nvidia-imex-ctl when present: blocks for at most the configured bound (plus the kill). */
    public ImexDaemon imexDaemon() {
        String config = settings.imexConfig().toString();
        return guarded("IMEX daemon", () -> new ImexDaemonInspector(settings.imexConfig(), settings.imexCtl(),
                settings.imexCtlSearchPath(), settings.imexCtlTimeout()).inspect(),
                error -> ImexDaemon.failed(config, error));
    }

    public VisibleDevices visibleDevices() {
        return VisibleDevices.from(settings.env());
    }

    /**
     * The hostname of this UTS namespace from procfs (no DNS lookup, which can hang), else $HOSTNAME, else null.
     */
    public String hostname() {
        Path file = settings.procRoot().resolve("sys/kernel/hostname");
        try {
            String name = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException | RuntimeException e) {
            // fall through to the environment
        }
        String env = settings.env().get("HOSTNAME");
        return env == null || env.isBlank() ? null : env.strip();
    }

    /** Runs one part; an unexpected exception becomes that part's error, never the caller's. */
    static <T> T guarded(String part, Supplier<T> inspection, Function<String, T> failed) {
        try {
            return inspection.get();
        } catch (RuntimeException e) {
            return failed.apply("inspecting " + part + " failed unexpectedly (" + e
                    + "); this is a bug in imexprobe: report it with this message");
        }
    }
}
