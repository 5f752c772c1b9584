package dev.imexprobe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A machine for the fake driver, described as data (after go-nvml's fakes): how many GPUs, which host, which
 * IMEX channels, which faults. It owns its folders and turns into the environment of a process that loads the
 * fake libcuda through the real shim. Several processes given the same machine share its allocations.
 */
public final class FakeMachine {

    private final Path root;
    private final Path stateDir;
    private final Path channelDir;
    private final Path faultFile;
    private final Path configFile;
    private int gpus = 1;
    private String host = "fake-host-a";
    private Path devDir;
    private final Map<String, String> config = new LinkedHashMap<>();

    private FakeMachine(Path root) {
        this.root = root;
        this.stateDir = root.resolve("state");
        this.channelDir = root.resolve("channels");
        this.faultFile = root.resolve("faults");
        this.configFile = root.resolve("fake.cfg");
        try {
            Files.createDirectories(stateDir);
            Files.createDirectories(channelDir);
            Files.writeString(faultFile, "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One H200-like GPU, channel0, as measured on the H200 once channel0 was created. */
    public static FakeMachine h200(Path root) {
        return new FakeMachine(root).channels(0);
    }

    /** The same machine without any channel: create → 800, as measured. */
    public static FakeMachine h200WithoutChannel(Path root) {
        return new FakeMachine(root);
    }

    /**
     * The seed's machine: two GPUs on one host sharing channel0. Give each agent one GPU with
     * {@link #containerEnv(int)}; as measured on two H200s, importing the other GPU's memory then fails (FABRIC 801).
     */
    public static FakeMachine twoGpus(Path root) {
        return new FakeMachine(root).gpus(2).channels(0);
    }

    public FakeMachine gpus(int n) {
        this.gpus = n;
        return this;
    }

    public FakeMachine host(String id) {
        this.host = id;
        return this;
    }

    /** Model a container runtime: only GPUs whose nvidiaN file exists in this folder are present. */
    public FakeMachine deviceNodes(int... present) {
        devDir = root.resolve("dev");
        try {
            Files.createDirectories(devDir);
            for (int i : present) {
                Files.writeString(devDir.resolve("nvidia" + i), "");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Adds channelN entries (plain files, which the fake accepts). */
    public FakeMachine channels(int... numbers) {
        try {
            for (int n : numbers) {
                Files.writeString(channelDir.resolve("channel" + n), "");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /**
     * A separate channel folder holding only the given channels: what one container sees when its runtime
     * gives it other channels than its neighbour. Pass it to {@link #env(Path)} for that process.
     */
    public Path channelView(String name, int... numbers) {
        Path dir = root.resolve("channels-" + name);
        try {
            Files.createDirectories(dir);
            for (int n : numbers) {
                Files.writeString(dir.resolve("channel" + n), "");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir;
    }

    /** The environment of a process that sees the channels of {@code channelView} instead of the machine's. */
    public Map<String, String> env(Path channelView) {
        Map<String, String> env = env();
        env.put("FAKECUDA_CHANNEL_DIR", channelView.toString());
        return env;
    }

    public FakeMachine removeChannels() {
        try (Stream<Path> s = Files.list(channelDir)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Per-GPU fabric settings, e.g. fabric(0, 3, "…cluster…", 7) for a COMPLETED GPU in clique 7. */
    public FakeMachine fabric(int gpu, int state, String clusterUuid, long clique) {
        config.put("gpu." + gpu + ".fabric.state", Integer.toString(state));
        config.put("gpu." + gpu + ".fabric.status", "0");
        config.put("gpu." + gpu + ".fabric.cluster", clusterUuid);
        config.put("gpu." + gpu + ".fabric.clique", Long.toString(clique));
        return this;
    }

    public FakeMachine config(String key, String value) {
        config.put(key, value);
        return this;
    }

    /** Sets the faults every process of this machine re-reads on each call (see FAKECUDA_FAULTS). */
    public FakeMachine fault(String spec) {
        try {
            // Write beside and rename: the fake re-reads the file on every call and must never see half of it.
            Path tmp = Files.createTempFile(root, "faults", ".tmp");
            Files.writeString(tmp, spec);
            Files.move(tmp, faultFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    public FakeMachine clearFaults() {
        return fault("");
    }

    /**
     * The GPUs the fake made a primary context on, as "create N" lines, once each, from a process's
     * FAKECUDA_CONTEXT_LOG; empty when it made none (no log).
     */
    public static List<String> contextsCreated(Path log) {
        try {
            return Files.exists(log) ? Files.readAllLines(log).stream().filter(l -> l.startsWith("create ")).distinct()
                    .toList() : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path stateDir() {
        return stateDir;
    }

    public Path channelDir() {
        return channelDir;
    }

    public String host() {
        return host;
    }

    /** The allocation files of live (or not yet collected) allocations. */
    public List<Path> stateFiles() {
        try (Stream<Path> s = Files.list(stateDir)) {
            // not the EXCLUSIVE_PROCESS lock files (exclusive-*), which stay
            return s.filter(p -> !p.getFileName().toString().startsWith("exclusive-")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The environment of a container given only GPU {@code gpu}, as a container runtime builds it: its /dev holds
     * that GPU's nvidiaN alone (a FAKECUDA_DEV_DIR of its own), so the process sees one GPU, ordinal 0.
     */
    public Map<String, String> containerEnv(int gpu) {
        Path view = root.resolve("container-gpu" + gpu);
        try {
            Files.createDirectories(view);
            Files.writeString(view.resolve("nvidia" + gpu), "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> env = env();
        env.put("FAKECUDA_DEV_DIR", view.toString());
        return env;
    }

    /** The environment of a process on this machine; add CUDA_VISIBLE_DEVICES and the like on top. */
    public Map<String, String> env() {
        Path lib = NativeBuild.fakeDir();
        Map<String, String> env = new LinkedHashMap<>();
        env.put("IMEXPROBE_CUDA_LIBRARY", lib.resolve("libcuda.so.1").toString());
        env.put("IMEXPROBE_NVML_LIBRARY", lib.resolve("libnvidia-ml.so.1").toString());
        env.put("FAKECUDA_GPUS", Integer.toString(gpus));
        env.put("FAKECUDA_STATE_DIR", stateDir.toString());
        env.put("FAKECUDA_CHANNEL_DIR", channelDir.toString());
        env.put("FAKECUDA_FAULTS", "@" + faultFile);
        if (devDir != null) {
            env.put("FAKECUDA_DEV_DIR", devDir.toString());
        }
        List<String> lines = new ArrayList<>();
        lines.add("host=" + host);
        config.forEach((k, v) -> lines.add(k + "=" + v));
        try {
            Files.write(configFile, lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        env.put("FAKECUDA_CONFIG", configFile.toString());
        return env;
    }
}
