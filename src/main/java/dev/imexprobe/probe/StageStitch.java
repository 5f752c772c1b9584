package dev.imexprobe.probe;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The stages of one exchange put together from both sides (two agents, or two ladder workers), in the order of
 * {@link Stage}; a stage neither side ran is skipped with the reason last given to {@link #gap}.
 */
public final class StageStitch {

    private final EnumMap<Stage, StageResult> stages = new EnumMap<>(Stage.class);
    private String gap = "not run";

    /** Adds a side's result for its stage (replacing an earlier one); null is ignored. */
    public void add(StageResult r) {
        if (r != null) {
            stages.put(r.name(), r);
        }
    }

    public void addAll(List<StageResult> rs) {
        rs.forEach(this::add);
    }

    public void addAllExcept(List<StageResult> rs, Stage... excluded) {
        Set<Stage> ex = excluded.length == 0 ? Set.of() : EnumSet.of(excluded[0], excluded);
        for (StageResult r : rs) {
            if (!ex.contains(r.name())) {
                add(r);
            }
        }
    }

    /** Why the stages that are missing did not run. */
    public void gap(String reason) {
        gap = reason;
    }

    /** Every stage; those no side ran are skipped with the gap's reason. */
    public List<StageResult> list() {
        List<StageResult> out = new ArrayList<>();
        for (Stage s : Stage.values()) {
            out.add(stages.getOrDefault(s, StageResult.skipped(s, gap)));
        }
        return List.copyOf(out);
    }

    /** {@link #gap} then {@link #list}. */
    public List<StageResult> list(String gap) {
        gap(gap);
        return list();
    }

    /** The importer's write and the exporter's check become one write-back stage; null when the write never ran. */
    public static StageResult mergeWriteback(StageResult write, StageResult check) {
        if (write == null || !write.ok() || check == null) {
            return write;
        }
        return new StageResult(Stage.WRITEBACK, check.status(), check.cuResult(), check.cuResultName(),
                write.durationSeconds() + check.durationSeconds(), "importer wrote; exporter: " + check.detail());
    }

    /** Both sides' releases become one stage; the first failure (the importer's first) is shown. */
    public static StageResult mergeRelease(StageResult importerSide, StageResult exporterSide) {
        if (importerSide == null || exporterSide == null) {
            return importerSide != null ? importerSide : exporterSide;
        }
        StageResult failed = failure(importerSide) ? importerSide : failure(exporterSide) ? exporterSide : null;
        StageResult shown = failed != null ? failed : importerSide.cuResult() != null ? importerSide : exporterSide;
        StageStatus status = failed != null ? failed.status()
                : importerSide.ok() || exporterSide.ok() ? StageStatus.OK : StageStatus.SKIPPED;
        return new StageResult(Stage.RELEASE, status, shown.cuResult(), shown.cuResultName(),
                importerSide.durationSeconds() + exporterSide.durationSeconds(),
                "importer: " + importerSide.detail() + "; exporter: " + exporterSide.detail());
    }

    private static boolean failure(StageResult r) {
        return r.status() == StageStatus.FAILED || r.status() == StageStatus.TIMEOUT;
    }
}
