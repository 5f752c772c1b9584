package dev.imexprobe.ladder;

import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.probe.StageResult;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.List;
import java.util.Locale;

/**
 * The ladder's document ({@code ladder --json}, POST /v1/ladder): every rung × handle type with its status, and
 * one verdict naming the layer at fault. {@code cuResult} appears only inside stage results, as everywhere.
 *
 * @param node             this node's name
 * @param fake             the workers ran on the fake driver: every result is simulated
 * @param exporterGpu      GPU A (exporter on every rung; both sides on rungs 0, 1, 5)
 * @param importerGpu      GPU B (importer on rungs 2–4); null when there is none
 * @param sizeBytes        bytes per allocation
 * @param mountNamespaces  null when mount namespaces work here, else why not (rungs that need them are skipped)
 * @param rungs            in ladder order
 * @param verdict          the first of {@code findings}: what the ladder concludes
 * @param findings         the verdict and any further observations, from the catalogue (LADDER_* and others)
 * @param exitCode         0 every rung that ran passed, 1 a rung failed, 2 could not tell
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LadderReport(String node, boolean fake, GpuRef exporterGpu, GpuRef importerGpu, Long sizeBytes,
                           String mountNamespaces, List<RungResult> rungs, Finding verdict, List<Finding> findings,
                           int exitCode, double durationSeconds) {

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int UNKNOWN = 2;

    /** A GPU as the ladder used it: its ordinal with every GPU visible, UUID and PCI bus id. */
    public record GpuRef(int index, String uuid, String pciBusId) {
    }

    /**
     * One rung.
     *
     * @param setup    what the rung changes (the same sentence for every run)
     * @param exporter what the exporter's process was given, one phrase per step (empty: nothing hidden)
     * @param importer the same for the importer (absent on rung 0)
     * @param seen     what each process reported it sees once isolated: exporter first, then importer
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record RungResult(Rung rung, String title, String setup, List<String> exporter, List<String> importer,
                             List<ProcessView> seen, List<Cell> results) {
    }

    /**
     * One rung × handle type.
     *
     * @param expected    "pass", or the stage and result the rung expects (rung 5b: import NOT_PERMITTED)
     * @param outcome     what happened, in a phrase: "passed", "import failed: CUDA_ERROR_INVALID_DEVICE (101)", …
     * @param reason      why it was skipped, or what kept the ladder from running it (status error)
     * @param failedStage the first stage that failed or timed out, null when none did
     * @param finding     the catalogue's reading of that failure (as a probe between agents would report it)
     * @param stages      every stage, exporter and importer stitched together in the usual order
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Cell(HandleType handleType, Status status, String expected, String outcome, String reason,
                       StageResult failedStage, Finding finding, List<StageResult> stages) {

        static Cell skipped(HandleType type, String reason) {
            return new Cell(type, Status.SKIPPED, null, "skipped", reason, null, null, null);
        }

        static Cell error(HandleType type, String reason) {
            return new Cell(type, Status.ERROR, null, "not run", reason, null, null, null);
        }
    }

    /** pass/fail against the rung's expectation; skipped (said why); error: the ladder itself could not run it. */
    public enum Status {
        PASS, FAIL, SKIPPED, ERROR;

        @JsonValue
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public RungResult rung(Rung rung) {
        return rungs.stream().filter(r -> r.rung() == rung).findFirst().orElse(null);
    }

    /** The cell of one rung and handle type, or null when the report has none (no driver, no GPU). */
    public Cell cell(Rung rung, HandleType type) {
        RungResult r = rung(rung);
        return r == null ? null : r.results().stream().filter(c -> c.handleType() == type).findFirst().orElse(null);
    }
}
