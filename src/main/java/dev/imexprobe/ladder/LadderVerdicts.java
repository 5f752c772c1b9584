package dev.imexprobe.ladder;

import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.ladder.LadderReport.Cell;
import dev.imexprobe.ladder.LadderReport.RungResult;
import dev.imexprobe.ladder.LadderReport.Status;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The verdict table: from the rung × handle type results to the findings that say which layer is at fault. The
 * texts live in the catalogue (FindingCode LADDER_*); which one applies is decided here and nowhere else.
 *
 * <pre>
 * first FABRIC failure (rungs 0–4)  POSIX_FD on that rung          verdict
 * 0 one process                     any                            LADDER_FAILS_IN_ONE_PROCESS
 * 1 two processes, same GPU         passes / not tried             LADDER_FABRIC_FAILS_ACROSS_PROCESSES
 *                                   fails there first              LADDER_FAILS_ACROSS_PROCESSES
 * 2 two GPUs, all visible           passes / not tried             LADDER_FABRIC_FAILS_ACROSS_GPUS
 *                                   fails there first              LADDER_FAILS_ACROSS_GPUS
 * 3 CUDA_VISIBLE_DEVICES            passes / not tried             LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE
 *                                   fails there first              LADDER_NEEDS_EXPORTER_GPU_VISIBLE
 * 4 device nodes hidden             passes / not tried             LADDER_FABRIC_NEEDS_EXPORTER_DEVICE_NODE
 *                                   fails there first              LADDER_NEEDS_EXPORTER_DEVICE_NODE (the seed, on two H200s)
 * then, each when it applies:
 *   a more isolated rung passes after the first failure            LADDER_INCONSISTENT
 *   5a fails (rung 1 passed)                                       LADDER_SHARED_CHANNEL_FAILS
 *   5b gives anything but import 800 (rungs 1 and 5a passed)       LADDER_CHANNELS_NOT_ENFORCED
 *   POSIX_FD fails on a rung where FABRIC is as expected           LADDER_POSIX_FD_FAILS
 *   a cell the ladder could not run, before the first failure      LADDER_NOT_RUN (listed first)
 *   nothing of the above, every FABRIC cell ran                    LADDER_PASSED
 *   nothing failed, but FABRIC was skipped somewhere               LADDER_INCOMPLETE
 * </pre>
 * "Fails there first": POSIX_FD fails on that rung and passed on every earlier two-process rung that ran it;
 * otherwise POSIX_FD says nothing about that rung and the FABRIC-only verdict stands, with the reason in
 * its evidence.
 */
public final class LadderVerdicts {

    /** The rungs that add isolation one step at a time. */
    static final List<Rung> STEPS = List.of(Rung.ONE_PROCESS, Rung.TWO_PROCESSES, Rung.TWO_GPUS,
            Rung.VISIBLE_DEVICES, Rung.DEVICE_NODES);

    /**
     * @param exporterGpu     GPU A's index, for the evidence
     * @param importerGpu     GPU B's index, null when there is none
     * @param exporterChannel the channel rungs 5a/5b give the exporter, null when they did not run
     * @param importerChannel the channel rung 5b gives the importer
     */
    public record Context(Integer exporterGpu, Integer importerGpu, String exporterChannel, String importerChannel) {
    }

    private LadderVerdicts() {
    }

    /** The findings for a finished ladder, the verdict first; never empty. */
    public static List<Finding> decide(List<RungResult> rungs, Context context) {
        Map<Rung, RungResult> byRung = new LinkedHashMap<>();
        rungs.forEach(r -> byRung.put(r.rung(), r));
        List<Finding> out = new ArrayList<>();

        Rung firstFail = STEPS.stream().filter(r -> status(byRung, r, HandleType.FABRIC) == Status.FAIL)
                .findFirst().orElse(null);
        Rung firstError = rungs.stream().map(RungResult::rung)
                .filter(r -> byRung.get(r).results().stream().anyMatch(c -> c.status() == Status.ERROR))
                .findFirst().orElse(null);
        if (firstError != null && (firstFail == null || firstError.ordinal() < firstFail.ordinal())) {
            Cell c = byRung.get(firstError).results().stream().filter(x -> x.status() == Status.ERROR)
                    .findFirst().orElseThrow();
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("rung", firstError.label());
            e.put("handleType", c.handleType().name());
            e.put("detail", c.reason());
            out.add(FindingCode.LADDER_NOT_RUN.finding(e));
        }

        if (firstFail != null) {
            out.add(stepVerdict(byRung, firstFail, context));
            List<String> laterPassing = STEPS.stream().filter(r -> r.ordinal() > firstFail.ordinal())
                    .filter(r -> status(byRung, r, HandleType.FABRIC) == Status.PASS).map(Rung::label).toList();
            if (!laterPassing.isEmpty()) {
                Map<String, Object> e = failureEvidence(byRung, firstFail, context);
                e.put("laterPassing", String.join(", ", laterPassing));
                out.add(FindingCode.LADDER_INCONSISTENT.finding(e));
            }
        }

        if (status(byRung, Rung.TWO_PROCESSES, HandleType.FABRIC) == Status.PASS) {
            if (status(byRung, Rung.SAME_CHANNEL, HandleType.FABRIC) == Status.FAIL) {
                out.add(FindingCode.LADDER_SHARED_CHANNEL_FAILS.finding(failureEvidence(byRung, Rung.SAME_CHANNEL,
                        context)));
            } else if (status(byRung, Rung.SAME_CHANNEL, HandleType.FABRIC) == Status.PASS
                    && status(byRung, Rung.OTHER_CHANNEL, HandleType.FABRIC) == Status.FAIL) {
                Map<String, Object> e = failureEvidence(byRung, Rung.OTHER_CHANNEL, context);
                e.put("outcome", cell(byRung, Rung.OTHER_CHANNEL, HandleType.FABRIC).outcome());
                out.add(FindingCode.LADDER_CHANNELS_NOT_ENFORCED.finding(e));
            }
        }

        for (RungResult r : rungs) {
            if (status(byRung, r.rung(), HandleType.POSIX_FD) == Status.FAIL
                    && status(byRung, r.rung(), HandleType.FABRIC) == Status.PASS) {
                Cell p = cell(byRung, r.rung(), HandleType.POSIX_FD);
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("rung", r.rung().label());
                e.put("handleType", HandleType.POSIX_FD.name());
                e.put("stage", p.failedStage() == null ? "unknown" : p.failedStage().name().label());
                e.put("detail", p.failedStage() == null ? p.outcome() : p.failedStage().detail());
                out.add(FindingCode.LADDER_POSIX_FD_FAILS.finding(e));
                break;
            }
        }

        List<RungResult> skipped = rungs.stream()
                .filter(r -> status(byRung, r.rung(), HandleType.FABRIC) == Status.SKIPPED).toList();
        boolean problem = out.stream().anyMatch(f -> f.severity() == dev.imexprobe.finding.Severity.ERROR);
        if (!problem) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("ranRungs", rungs.stream().filter(r -> {
                Status s = status(byRung, r.rung(), HandleType.FABRIC);
                return s == Status.PASS || s == Status.FAIL;
            }).map(r -> r.rung().label()).collect(Collectors.joining(", ")));
            if (skipped.isEmpty()) {
                if (out.isEmpty()) {
                    out.add(FindingCode.LADDER_PASSED.finding(e));
                }
            } else {
                e.put("skippedRungs", skipped.stream().map(r -> r.rung().label()).collect(Collectors.joining(", ")));
                e.put("skipReasons", skipped.stream().map(r -> r.rung().label() + ": "
                        + cell(byRung, r.rung(), HandleType.FABRIC).reason()).distinct()
                        .collect(Collectors.joining("; ")));
                out.add(FindingCode.LADDER_INCOMPLETE.finding(e));
            }
        }
        return List.copyOf(out);
    }

    private static Finding stepVerdict(Map<Rung, RungResult> byRung, Rung rung, Context context) {
        Map<String, Object> e = failureEvidence(byRung, rung, context);
        boolean posixFailsHereFirst = status(byRung, rung, HandleType.POSIX_FD) == Status.FAIL
                && STEPS.stream().filter(r -> r.twoProcesses() && r.ordinal() < rung.ordinal())
                .noneMatch(r -> status(byRung, r, HandleType.POSIX_FD) == Status.FAIL);
        FindingCode code = switch (rung) {
            case ONE_PROCESS -> FindingCode.LADDER_FAILS_IN_ONE_PROCESS;
            case TWO_PROCESSES -> posixFailsHereFirst ? FindingCode.LADDER_FAILS_ACROSS_PROCESSES
                    : FindingCode.LADDER_FABRIC_FAILS_ACROSS_PROCESSES;
            case TWO_GPUS -> posixFailsHereFirst ? FindingCode.LADDER_FAILS_ACROSS_GPUS
                    : FindingCode.LADDER_FABRIC_FAILS_ACROSS_GPUS;
            case VISIBLE_DEVICES -> posixFailsHereFirst ? FindingCode.LADDER_NEEDS_EXPORTER_GPU_VISIBLE
                    : FindingCode.LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE;
            case DEVICE_NODES -> posixFailsHereFirst ? FindingCode.LADDER_NEEDS_EXPORTER_DEVICE_NODE
                    : FindingCode.LADDER_FABRIC_NEEDS_EXPORTER_DEVICE_NODE;
            case SAME_CHANNEL, OTHER_CHANNEL -> throw new IllegalArgumentException("not an isolation step: " + rung);
        };
        return code.finding(e);
    }

    /** The evidence every failure verdict carries: where, what, and how POSIX_FD fared on the same rung. */
    private static Map<String, Object> failureEvidence(Map<Rung, RungResult> byRung, Rung rung, Context context) {
        Cell fabric = cell(byRung, rung, HandleType.FABRIC);
        StageResult failed = fabric == null ? null : fabric.failedStage();
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("rung", rung.label());
        e.put("handleType", HandleType.FABRIC.name());
        e.put("stage", failed == null ? "none" : failed.name().label());
        e.put("driverResult", result(failed));
        if (failed != null && failed.cuResult() != null) {
            e.put("driverResultCode", failed.cuResult());
        }
        if (failed != null) {
            e.put("detail", failed.detail());
        }
        if (fabric != null && fabric.finding() != null) {
            e.put("finding", fabric.finding().code());
        }
        e.put("posixFd", posixSentence(byRung, rung));
        e.put("exporterGpu", context.exporterGpu());
        if (rung.needsTwoGpus()) {
            e.put("importerGpu", context.importerGpu());
        }
        if (rung == Rung.SAME_CHANNEL || rung == Rung.OTHER_CHANNEL) {
            e.put("exporterChannel", context.exporterChannel());
            e.put("importerChannel", rung == Rung.SAME_CHANNEL ? context.exporterChannel() : context.importerChannel());
        }
        return e;
    }

    /** How POSIX_FD fared on the rung, as a sentence a verdict can quote. */
    static String posixSentence(Map<Rung, RungResult> byRung, Rung rung) {
        Cell p = cell(byRung, rung, HandleType.POSIX_FD);
        String where = rung == Rung.ONE_PROCESS ? "in the same process" : "between the same two processes";
        if (p == null) {
            return "POSIX_FD was not tried.";
        }
        Rung earlier = STEPS.stream().filter(r -> r.twoProcesses() && r.ordinal() < rung.ordinal())
                .filter(r -> status(byRung, r, HandleType.POSIX_FD) == Status.FAIL).findFirst().orElse(null);
        return switch (p.status()) {
            case PASS -> "POSIX_FD " + where + " passed on this rung, so the memory itself can be shared.";
            case FAIL -> earlier != null
                    ? "POSIX_FD already failed on rung " + earlier.label() + ", so it tells nothing about this one."
                    : "POSIX_FD " + where + " failed too (" + p.outcome() + ").";
            case SKIPPED -> "POSIX_FD was not tried (" + p.reason() + ").";
            case ERROR -> "POSIX_FD could not be run (" + p.reason() + ").";
        };
    }

    /** The failing stage's result in words: the CUresult when the driver failed, else what went wrong. */
    static String result(StageResult failed) {
        if (failed == null) {
            return "none";
        }
        if (failed.cuResult() != null && failed.cuResult() != 0) {
            return failed.cuResultName() + " (" + failed.cuResult() + ")";
        }
        if (failed.status() == StageStatus.TIMEOUT) {
            return "timeout";
        }
        return "no driver error: " + failed.detail();
    }

    private static Cell cell(Map<Rung, RungResult> byRung, Rung rung, HandleType type) {
        RungResult r = byRung.get(rung);
        return r == null ? null : r.results().stream().filter(c -> c.handleType() == type).findFirst().orElse(null);
    }

    private static Status status(Map<Rung, RungResult> byRung, Rung rung, HandleType type) {
        Cell c = cell(byRung, rung, type);
        return c == null ? null : c.status();
    }
}
