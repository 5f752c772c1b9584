package dev.imexprobe.ladder;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.ladder.Ladder.GpuInfo;
import dev.imexprobe.ladder.Ladder.Scout;
import dev.imexprobe.probe.Stage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What each two-process rung gives each worker (GPUs, device nodes, channels, by environment or mount
 * namespace), what it expects the exchange to do, and how to tell that the isolation took; or why the rung
 * cannot run on this machine.
 */
final class RungPlanner {

    private static final Pattern CHANNEL = Pattern.compile("channel(0|[1-9][0-9]{0,8})");
    private static final Pattern GPU_NODE = Pattern.compile("nvidia(0|[1-9][0-9]{0,8})");
    private static final Path PROC_GPUS = Path.of("/proc/driver/nvidia/gpus");
    private static final Path PROC_PARAMS = Path.of("/proc/driver/nvidia/params");

    private final Scout scout;
    private final GpuInfo a;
    private final GpuInfo b;
    private final String channelX;
    private final String channelY;
    private final String namespaceProblem;
    /** A fresh folder of the ladder's working folder, by name. */
    private final Function<String, Path> scratch;

    RungPlanner(Scout scout, GpuInfo a, GpuInfo b, String channelX, String channelY, String namespaceProblem,
                Function<String, Path> scratch) {
        this.scout = scout;
        this.a = a;
        this.b = b;
        this.channelX = channelX;
        this.channelY = channelY;
        this.namespaceProblem = namespaceProblem;
        this.scratch = scratch;
    }

    /** What planning a two-process rung gives: a plan to run, or why the rung cannot run on this machine. */
    sealed interface Planned permits Plan, CannotRun {
    }

    /** A two-process rung ready to run: who gets what, where each allocates or maps, what is expected. */
    record Plan(Isolation exporter, Isolation importer, int exporterOrdinal, int importerOrdinal,
                Expected expected, Expected expectedPosixFd, ViewCheck check) implements Planned {
    }

    /** The rung is skipped, and this says why (a missing GPU, channel or namespace). */
    record CannotRun(String reason) implements Planned {
    }

    /** A rung's expectation: null stage = the whole exchange passes; else this stage fails with this code. */
    record Expected(Stage stage, CuResult result) {
        static final Expected PASS = new Expected(null, null);

        String label() {
            return stage == null ? "pass" : stage.label() + ": " + result.name() + " (" + result.code() + ")";
        }
    }

    /** Null when the processes see what the rung meant to give them, else what differs. */
    interface ViewCheck {
        String mismatch(ProcessView exporter, ProcessView importer);
    }

    /** The rung's plan, or the reason it cannot run here. */
    Planned plan(Rung rung) {
        Isolation all = Isolation.allVisible();
        int count = scout.gpus().size();
        ViewCheck everyGpu = (e, i) -> sees(e, count, "exporter") != null ? sees(e, count, "exporter")
                : sees(i, count, "importer");
        if (rung.needsTwoGpus() && b == null) {
            return new CannotRun(count < 2 ? "needs a second GPU: the driver shows " + count + " GPU"
                    : "needs a second GPU: --gpus named only GPU " + a.index());
        }
        return switch (rung) {
            case TWO_PROCESSES -> new Plan(all, all, a.index(), a.index(), Expected.PASS, Expected.PASS, everyGpu);
            case TWO_GPUS -> new Plan(all, all, a.index(), b.index(), Expected.PASS, Expected.PASS, everyGpu);
            case VISIBLE_DEVICES -> new Plan(visibleOnly(a), visibleOnly(b), 0, 0, Expected.PASS, Expected.PASS,
                    (e, i) -> firstNonNull(onlyGpu(e, a, "exporter"), onlyGpu(i, b, "importer")));
            case DEVICE_NODES -> deviceNodesPlan();
            case SAME_CHANNEL -> channelPlan(rung, channelX);
            case OTHER_CHANNEL -> channelPlan(rung, channelY);
            case ONE_PROCESS -> throw new IllegalArgumentException("rung 0 runs in one process");
        };
    }

    private Isolation visibleOnly(GpuInfo g) {
        return Isolation.allVisible().withEnv("CUDA_VISIBLE_DEVICES", g.uuid(),
                "CUDA_VISIBLE_DEVICES=" + g.uuid() + " (GPU " + g.index() + " only)");
    }

    private Planned deviceNodesPlan() {
        if (namespaceProblem != null) {
            return new CannotRun(namespaceProblem);
        }
        List<GpuDeviceNodes.Gpu> gpus = scout.gpus().stream()
                .map(g -> new GpuDeviceNodes.Gpu(g.index(), g.uuid(), g.pciBusId())).toList();
        Path devRoot;
        GpuDeviceNodes map;
        if (scout.isFake()) {
            String devDir = scout.fake().getOrDefault("devDir", "");
            if (devDir.isBlank()) {
                return new CannotRun("the fake driver models device nodes only when FAKECUDA_DEV_DIR names a "
                        + "folder of nvidiaN files, and it is not set");
            }
            devRoot = Path.of(devDir);
            map = GpuDeviceNodes.fake(devRoot, gpus);
        } else {
            devRoot = ProcessView.REAL_DEV;
            map = GpuDeviceNodes.real(PROC_GPUS, gpus);
        }
        if (map.problem() != null) {
            return new CannotRun(map.problem());
        }
        Isolation exporter = hideOtherGpus(visibleOnly(a), a, devRoot, map);
        Isolation importer = hideOtherGpus(visibleOnly(b), b, devRoot, map);
        return new Plan(exporter, importer, 0, 0, Expected.PASS, Expected.PASS, (e, i) -> firstNonNull(
                onlyGpu(e, a, "exporter"), onlyGpu(i, b, "importer"),
                onlyNode(e, map.nodes().get(a.uuid()), "exporter"), onlyNode(i, map.nodes().get(b.uuid()), "importer"),
                onlyProc(e, map.procEntries().get(a.uuid()), "exporter"),
                onlyProc(i, map.procEntries().get(b.uuid()), "importer")));
    }

    /** Hides every GPU device node but g's, as a container runtime given only g would. */
    private Isolation hideOtherGpus(Isolation base, GpuInfo g, Path devRoot, GpuDeviceNodes map) {
        String own = map.nodes().get(g.uuid());
        List<String> others = ProcessView.entries(devRoot, GPU_NODE, false).stream()
                .filter(n -> !n.equals(own)).toList();
        Isolation iso = base.hide(devRoot, others, "hidden: " + others.stream().map(n -> devRoot.resolve(n)
                .toString()).reduce((x, y) -> x + ", " + y).orElse("nothing (no other nvidiaN)")
                + " (mount namespace)");
        String ownProc = map.procEntries().get(g.uuid());
        if (ownProc != null) {
            List<String> otherProc = ProcessView.entries(PROC_GPUS, null, false).stream()
                    .filter(n -> !n.equals(ownProc)).toList();
            iso = iso.hide(PROC_GPUS, otherProc, "hidden: " + PROC_GPUS + "/{" + String.join(",", otherProc) + "}");
            if (paramsHaveModifyDeviceFiles()) {
                // libnvidia-container does the same: else the driver may re-create the nodes we hid.
                iso = iso.param(PROC_PARAMS, "ModifyDeviceFiles", "0", PROC_PARAMS + ": ModifyDeviceFiles: 0");
            }
        }
        return iso;
    }

    private Planned channelPlan(Rung rung, String importerChannel) {
        Path dir = Path.of(scout.view().channelDir());
        if (channelX == null) {
            return new CannotRun("no IMEX channel is readable in " + dir + ": there is nothing to make a view "
                    + "of (create channel0 as gpu/ladder.sh does, or give the pod a ComputeDomain channel)");
        }
        if (importerChannel == null) {
            return new CannotRun("needs a second IMEX channel, and " + dir + " holds only " + channelX
                    + " (create channel1: mknod -m 666 " + dir + "/channel1 c <major of nvidia-caps-imex-channels> 1)");
        }
        Isolation exporter = channelView(rung, "exporter", dir, channelX);
        Isolation importer = channelView(rung, "importer", dir, importerChannel);
        if (exporter == null || importer == null) {
            return new CannotRun(namespaceProblem);
        }
        Expected fabric = rung == Rung.OTHER_CHANNEL ? new Expected(Stage.IMPORT, CuResult.NOT_PERMITTED)
                : Expected.PASS;
        int count = scout.gpus().size();
        return new Plan(exporter, importer, a.index(), a.index(), fabric, Expected.PASS, (e, i) -> firstNonNull(
                sees(e, count, "exporter"), sees(i, count, "importer"),
                onlyChannel(e, channelX, "exporter"), onlyChannel(i, importerChannel, "importer")));
    }

    /**
     * One process's view of the channel folder: a mount namespace where the others are hidden, as a
     * container runtime mounts only the claimed channel. Without namespaces the fake still allows it through
     * its own switch (it reads channels from FAKECUDA_CHANNEL_DIR), said so; the real driver does not.
     */
    private Isolation channelView(Rung rung, String side, Path dir, String keep) {
        if (namespaceProblem == null) {
            List<String> others = ProcessView.entries(dir, CHANNEL, false).stream()
                    .filter(n -> !n.equals(keep)).toList();
            return Isolation.allVisible().hide(dir, others, "IMEX channels: only " + keep + " (mount namespace "
                    + "over " + dir + ")");
        }
        if (!scout.isFake()) {
            return null;
        }
        Path view = scratch.apply("channels-" + rung.label() + "-" + side);
        try {
            Files.createSymbolicLink(view.resolve(keep), dir.resolve(keep));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a channel view in " + view, e);
        }
        return Isolation.allVisible().withEnv("FAKECUDA_CHANNEL_DIR", view.toString(), "IMEX channels: only "
                + keep + " (FAKECUDA_CHANNEL_DIR view: the fake reads its channels there; no namespace here)");
    }

    // ---- view checks: did the isolation take? --------------------------------------------------------------------

    private static String sees(ProcessView v, int gpus, String side) {
        return v.gpus().size() == gpus ? null
                : "the " + side + " sees " + v.gpus().size() + " GPU(s), not all " + gpus;
    }

    private static String onlyGpu(ProcessView v, GpuInfo g, String side) {
        return v.gpus().equals(List.of(g.uuid())) ? null
                : "the " + side + " sees GPUs " + v.gpus() + ", not only " + g.uuid();
    }

    private static String onlyNode(ProcessView v, String node, String side) {
        return Objects.equals(v.deviceNodes(), List.of(node)) ? null
                : "the " + side + " sees device nodes " + v.deviceNodes() + ", not only " + node;
    }

    private static String onlyProc(ProcessView v, String entry, String side) {
        return entry == null || Objects.equals(v.procGpus(), List.of(entry)) ? null
                : "the " + side + " sees /proc/driver/nvidia/gpus entries " + v.procGpus() + ", not only " + entry;
    }

    private static String onlyChannel(ProcessView v, String channel, String side) {
        return v.channels().equals(List.of(channel)) ? null
                : "the " + side + " sees channels " + v.channels() + ", not only " + channel;
    }

    private static String firstNonNull(String... texts) {
        return Stream.of(texts).filter(Objects::nonNull).findFirst().orElse(null);
    }

    private static boolean paramsHaveModifyDeviceFiles() {
        try {
            return Files.readString(PROC_PARAMS).lines().anyMatch(l -> l.startsWith("ModifyDeviceFiles:"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
