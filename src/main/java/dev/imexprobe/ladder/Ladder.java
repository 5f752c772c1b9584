package dev.imexprobe.ladder;

import dev.imexprobe.cuda.DeviceAttribute;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.ladder.LadderReport.Cell;
import dev.imexprobe.ladder.LadderReport.GpuRef;
import dev.imexprobe.ladder.LadderReport.RungResult;
import dev.imexprobe.ladder.LadderReport.Status;
import dev.imexprobe.ladder.LadderWorker.WorkerFailure;
import dev.imexprobe.ladder.RungPlanner.CannotRun;
import dev.imexprobe.ladder.RungPlanner.Expected;
import dev.imexprobe.ladder.RungPlanner.Plan;
import dev.imexprobe.ladder.WorkerReply.NodeReply;
import dev.imexprobe.ladder.WorkerReply.StagesReply;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The isolation ladder: the same export → import under growing isolation, each rung a full probe with fresh
 * worker processes (export in one, import in another; rung 0 in one), FABRIC and POSIX_FD side by side. The
 * ladder process itself loads no driver: the first worker (rung 0's) also reports the node's GPUs and the
 * fake driver's folders, so the ladder sees exactly what a worker sees.
 */
public final class Ladder {

    private static final System.Logger LOG = System.getLogger(Ladder.class.getName());
    private static final List<HandleType> TYPES = List.of(HandleType.FABRIC, HandleType.POSIX_FD);

    private final WorkerLauncher launcher;
    private final String node;

    public Ladder(WorkerLauncher launcher, String node) {
        this.launcher = launcher;
        this.node = node;
    }

    /** The ladder for this JVM's environment and node name. */
    public static Ladder forThisProcess(String node) {
        return new Ladder(WorkerLauncher.forThisJvm(System.getenv()), node);
    }

    /**
     * Runs every rung and decides the verdict. Never throws for what the driver or the workers do: those are
     * results. Throws IllegalArgumentException only when the options name a GPU the node does not have.
     */
    public LadderReport run(LadderOptions options) {
        Path work;
        try {
            work = Files.createTempDirectory("imexprobe-ladder-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the ladder's working folder in "
                    + System.getProperty("java.io.tmpdir") + " (sockets and worker logs go there)", e);
        }
        try {
            return new Run(options, work).execute();
        } finally {
            deleteTree(work);
        }
    }

    /** What the first worker told about the node. */
    record Scout(List<GpuInfo> gpus, Map<String, String> fake, ProcessView view) {
        boolean isFake() {
            return fake != null;
        }
    }

    record GpuInfo(int index, String uuid, String pciBusId, boolean fabric, boolean posixFd,
                           long granularity) {
        /** As the agent's context policy: only a 0 the driver read means the GPU lacks a handle type. */
        static GpuInfo of(GpuDevice g) {
            return new GpuInfo(g.index(), g.uuid(), g.pciBusId(), !g.lacks(DeviceAttribute.FABRIC),
                    !g.lacks(DeviceAttribute.POSIX_FILE_DESCRIPTOR), g.granularityBytes());
        }

        GpuRef ref() {
            return new GpuRef(index, uuid, pciBusId);
        }
    }

    private final class Run {
        private final LadderOptions options;
        private final Path work;
        private final long startNanos = System.nanoTime();
        private final long deadlineNanos;
        private final List<RungResult> rungs = new ArrayList<>();
        private int sockets;
        private Scout scout;
        private GpuInfo a;
        private GpuInfo b;
        private long size;
        private String namespaceProblem;
        private String channelX;
        private String channelY;
        private String library;
        private RungPlanner planner;

        Run(LadderOptions options, Path work) {
            this.options = options;
            this.work = work;
            this.deadlineNanos = startNanos + options.budget().toNanos();
        }

        LadderReport execute() {
            LadderWorker first;
            try {
                first = launcher.start("rung0", Isolation.allVisible(), work, driverTimeoutSeconds());
            } catch (WorkerFailure f) {
                return couldNotTell(notRun(f.getMessage()));
            }
            try (first) {
                NodeReply nodeReply = first.request(new WorkerRequest.Node(), timeout());
                Finding unusable = unusableDriver(nodeReply);
                if (unusable != null) {
                    return couldNotTell(unusable);
                }
                scout = new Scout(nodeReply.gpus().stream().map(GpuInfo::of).toList(), nodeReply.fake(), view(first));
                library = nodeReply.library() != null ? nodeReply.library() : "libcuda.so.1";
                chooseGpus();
                rungs.add(oneProcess(first));
            } catch (WorkerFailure f) {
                return couldNotTell(notRun(f.getMessage()));
            }
            namespaceProblem = Isolation.namespaceUnavailableReason(scratch("ns-check"));
            List<String> channels = scout.view().channels();
            channelX = channels.isEmpty() ? null : channels.getFirst();
            channelY = channels.size() > 1 ? channels.get(1) : null;
            planner = new RungPlanner(scout, a, b, channelX, channelY, namespaceProblem, this::scratch);
            for (Rung rung : List.of(Rung.TWO_PROCESSES, Rung.TWO_GPUS, Rung.VISIBLE_DEVICES, Rung.DEVICE_NODES,
                    Rung.SAME_CHANNEL, Rung.OTHER_CHANNEL)) {
                rungs.add(twoProcesses(rung));
            }
            List<Finding> findings = new ArrayList<>(LadderVerdicts.decide(rungs, new LadderVerdicts.Context(
                    a.index(), b == null ? null : b.index(), channelX, channelY)));
            boolean fabricUnsupported = !a.fabric() || b != null && !b.fabric();
            if (fabricUnsupported) {
                GpuInfo g = !a.fabric() ? a : b;
                findings.addFirst(FindingCode.FABRIC_UNSUPPORTED.finding(Map.of("gpu", g.index(), "uuid", g.uuid())));
            }
            if (scout.isFake()) {
                findings.add(FindingCode.SIMULATED.finding(Map.of("library", library)));
            }
            boolean failed = fabricUnsupported || rungs.stream().flatMap(r -> r.results().stream())
                    .anyMatch(c -> c.status() == Status.FAIL);
            boolean error = rungs.stream().flatMap(r -> r.results().stream()).anyMatch(c -> c.status() == Status.ERROR);
            int exit = failed ? LadderReport.FAILED : error ? LadderReport.UNKNOWN : LadderReport.OK;
            return new LadderReport(node, scout.isFake(), a.ref(), b == null ? null : b.ref(), size, namespaceProblem,
                    List.copyOf(rungs), findings.getFirst(), List.copyOf(findings), exit, seconds());
        }

        // ---- the node, as the first worker sees it -------------------------------------------------------------

        private Finding unusableDriver(NodeReply reply) {
            if (reply.driverProblem() != null) {
                return FindingCode.NO_DRIVER.finding(Map.of("reason", reply.driverProblem()));
            }
            if (!reply.ok() || reply.gpus() == null || reply.gpus().isEmpty()) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("driverResult", reply.init() != null ? reply.init() : "unknown");
                e.put("visibleDevices", "unset (the ladder removes it: rungs 0–2 see every GPU)");
                return FindingCode.NO_GPU.finding(e);
            }
            return null;
        }

        private void chooseGpus() {
            List<GpuInfo> gpus = scout.gpus();
            int ia = options.exporterGpu() != null ? options.exporterGpu() : 0;
            if (ia >= gpus.size()) {
                throw new IllegalArgumentException("GPU " + ia + " does not exist: the driver shows " + gpus.size()
                        + " GPU(s), 0.." + (gpus.size() - 1));
            }
            a = gpus.get(ia);
            if (options.importerGpu() != null) {
                if (options.importerGpu() >= gpus.size()) {
                    throw new IllegalArgumentException("GPU " + options.importerGpu() + " does not exist: the driver "
                            + "shows " + gpus.size() + " GPU(s), 0.." + (gpus.size() - 1));
                }
                b = gpus.get(options.importerGpu());
            } else if (!options.oneGpuOnly()) {
                b = gpus.stream().filter(g -> g.index() != ia).findFirst().orElse(null);
            }
            size = options.sizeBytes() != null ? options.sizeBytes() : a.granularity() > 0 ? a.granularity() : 2L << 20;
            // cuMemCreate refuses any other size with INVALID_VALUE, which every rung would report as the node's fault
            for (GpuInfo g : b == null ? List.of(a) : List.of(a, b)) {
                String why = GpuDevice.sizeRefusal(g.index(), g.granularity(), size);
                if (why != null) {
                    throw new IllegalArgumentException("size: " + why);
                }
            }
        }

        // ---- rung 0 --------------------------------------------------------------------------------------------

        private RungResult oneProcess(LadderWorker worker) throws WorkerFailure {
            List<Cell> cells = new ArrayList<>();
            for (HandleType type : TYPES) {
                String unsupported = unsupported(type, false);
                if (unsupported != null) {
                    cells.add(Cell.skipped(type, unsupported));
                    continue;
                }
                StagesReply reply = worker.request(new WorkerRequest.SelfProbe(a.index(), size, type, null, null),
                        timeout());
                cells.add(cell(type, WorkerExchange.stagesOf(reply, worker, "selfProbe"), Expected.PASS, true));
            }
            return new RungResult(Rung.ONE_PROCESS, Rung.ONE_PROCESS.title(), Rung.ONE_PROCESS.setup(), List.of(),
                    null, List.of(scout.view()), List.copyOf(cells));
        }

        // ---- rungs 1–5 -----------------------------------------------------------------------------------------

        private RungResult twoProcesses(Rung rung) {
            if (System.nanoTime() > deadlineNanos) {
                return skippedRung(rung, "the ladder's time budget of " + options.budget().toSeconds()
                        + " s ran out before this rung");
            }
            Plan plan;
            switch (planner.plan(rung)) {
                case CannotRun no -> {
                    return skippedRung(rung, no.reason());
                }
                case Plan p -> plan = p;
            }
            List<Cell> cells = new ArrayList<>();
            List<ProcessView> seen = new ArrayList<>();
            LadderWorker exporter = null;
            LadderWorker importer = null;
            HandleType current = TYPES.getFirst();
            try {
                exporter = launcher.start(rung.label() + "-exporter", plan.exporter(), work, driverTimeoutSeconds());
                importer = launcher.start(rung.label() + "-importer", plan.importer(), work, driverTimeoutSeconds());
                ProcessView ev = view(exporter);
                ProcessView iv = view(importer);
                seen.add(ev);
                seen.add(iv);
                String mismatch = plan.check().mismatch(ev, iv);
                if (mismatch != null) {
                    for (HandleType t : TYPES) {
                        cells.add(Cell.error(t, "the isolation did not take effect: " + mismatch));
                    }
                } else {
                    for (HandleType type : TYPES) {
                        current = type;
                        String unsupported = unsupported(type, rung.needsTwoGpus());
                        if (unsupported != null) {
                            cells.add(Cell.skipped(type, unsupported));
                            continue;
                        }
                        Expected expected = type == HandleType.FABRIC ? plan.expected() : plan.expectedPosixFd();
                        WorkerExchange exchange = new WorkerExchange(exporter, importer, this::timeout);
                        List<StageResult> stages = type == HandleType.FABRIC
                                ? exchange.fabric(plan.exporterOrdinal(), plan.importerOrdinal(), size)
                                : exchange.posixFd(plan.exporterOrdinal(), plan.importerOrdinal(), size,
                                        work.resolve("fd-" + (++sockets) + ".sock"));
                        cells.add(cell(type, stages, expected, iv.has(a.uuid())));
                    }
                }
            } catch (WorkerFailure f) {
                LOG.log(System.Logger.Level.WARNING, "ladder rung " + rung.label() + ": " + f.getMessage());
                for (HandleType t : TYPES) {
                    if (t.ordinal() >= current.ordinal() && cells.stream().noneMatch(c -> c.handleType() == t)) {
                        cells.add(Cell.error(t, f.getMessage()));
                    }
                }
                cells.sort(Comparator.comparingInt(c -> TYPES.indexOf(c.handleType())));
            } finally {
                if (importer != null) {
                    importer.close();
                }
                if (exporter != null) {
                    exporter.close();
                }
            }
            return new RungResult(rung, rung.title(), rung.setup(), plan.exporter().description(),
                    plan.importer().description(), List.copyOf(seen), List.copyOf(cells));
        }

        // ---- results -------------------------------------------------------------------------------------------

        /** {@code exporterGpuSeen}: the importer's process has GPU A, the exporter's ({@link ProcessView#has}). */
        private Cell cell(HandleType type, List<StageResult> stages, Expected expected, Boolean exporterGpuSeen) {
            StageResult failed = StageEngine.firstFailure(stages);
            boolean passed = StageEngine.passed(stages);
            Finding finding = failed == null ? null
                    : ProbeDiagnosis.diagnose(stages, true, a.uuid(), exporterGpuSeen, node, node);
            boolean asExpected = expected.stage() == null ? passed
                    : failed != null && failed.name() == expected.stage()
                    && Objects.equals(failed.cuResult(), expected.result().code());
            String outcome = failed == null ? "passed"
                    : passed ? "passed; " + failed.name().label() + " failed: " + LadderVerdicts.result(failed)
                    : failed.name().label() + " failed: " + LadderVerdicts.result(failed);
            if (asExpected && expected.stage() != null) {
                outcome += ", as expected";
            }
            return new Cell(type, asExpected ? Status.PASS : Status.FAIL, expected.label(), outcome, null, failed,
                    finding, stages);
        }

        private ProcessView view(LadderWorker worker) throws WorkerFailure {
            return worker.request(new WorkerRequest.View(), timeout()).view();
        }

        private String unsupported(HandleType type, boolean bothGpus) {
            for (GpuInfo g : bothGpus ? List.of(a, b) : List.of(a)) {
                if (type == HandleType.FABRIC && !g.fabric()) {
                    return "GPU " + g.index() + " reports HANDLE_TYPE_FABRIC_SUPPORTED=0";
                }
                if (type == HandleType.POSIX_FD && !g.posixFd()) {
                    return "GPU " + g.index() + " reports HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED=0";
                }
            }
            return null;
        }

        private RungResult skippedRung(Rung rung, String reason) {
            List<Cell> cells = TYPES.stream().map(t -> Cell.skipped(t, reason)).toList();
            return new RungResult(rung, rung.title(), rung.setup(), null, null, null, cells);
        }

        private Finding notRun(String reason) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("rung", Rung.ONE_PROCESS.label());
            e.put("handleType", "both");
            e.put("detail", reason);
            rungs.add(new RungResult(Rung.ONE_PROCESS, Rung.ONE_PROCESS.title(), Rung.ONE_PROCESS.setup(), List.of(),
                    null, null, TYPES.stream().map(t -> Cell.error(t, reason)).toList()));
            return FindingCode.LADDER_NOT_RUN.finding(e);
        }

        /** No driver, no GPU, or no first worker: nothing to climb. */
        private LadderReport couldNotTell(Finding why) {
            return new LadderReport(node, scout != null && scout.isFake(), null, null, null, null, List.copyOf(rungs),
                    why, List.of(why), LadderReport.UNKNOWN, seconds());
        }

        private Duration timeout() {
            long left = deadlineNanos - System.nanoTime();
            return Duration.ofNanos(Math.max(Duration.ofSeconds(1).toNanos(),
                    Math.min(options.answerTimeout().toNanos(), left)));
        }

        private int driverTimeoutSeconds() {
            return (int) Math.max(1, Math.min(5, options.answerTimeout().toSeconds() / 4));
        }

        private double seconds() {
            return (System.nanoTime() - startNanos) / 1e9;
        }

        private Path scratch(String name) {
            try {
                return Files.createDirectories(work.resolve(name));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + work.resolve(name), e);
            }
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "cannot delete " + p + ": " + e.getMessage());
                }
            });
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "cannot clean " + root + ": " + e.getMessage());
        }
    }
}
