package dev.imexprobe.ladder;

import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.ladder.LadderReport.Cell;
import dev.imexprobe.ladder.LadderReport.RungResult;
import dev.imexprobe.ladder.LadderReport.Status;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** The ladder for a person: one line per rung, FABRIC and POSIX_FD side by side, then the verdict. */
public final class LadderTable {

    private LadderTable() {
    }

    public static void print(LadderReport r, PrintStream out) {
        out.printf("imexprobe ladder — node %s%s%n", r.node(),
                r.fake() ? "   [SIMULATED: fake driver, results are not real]" : "");
        if (r.exporterGpu() != null) {
            out.printf("GPU A %d %s (%s)%s; %s per allocation%n", r.exporterGpu().index(), r.exporterGpu().uuid(),
                    r.exporterGpu().pciBusId(), r.importerGpu() == null ? ", no GPU B"
                            : String.format(", GPU B %d %s (%s)", r.importerGpu().index(), r.importerGpu().uuid(),
                            r.importerGpu().pciBusId()), r.sizeBytes() == null ? "-" : human(r.sizeBytes()));
            out.printf("mount namespaces: %s%n", r.mountNamespaces() == null ? "available" : "not available ("
                    + r.mountNamespaces() + ")");
        }
        int titleWidth = r.rungs().stream().mapToInt(x -> x.title().length()).max().orElse(10);
        List<String[]> rows = new ArrayList<>();
        for (RungResult rung : r.rungs()) {
            rows.add(new String[] {rung.rung().label(), rung.title(), text(cell(rung, HandleType.FABRIC)),
                    text(cell(rung, HandleType.POSIX_FD))});
        }
        int fabricWidth = Math.max(6, rows.stream().mapToInt(x -> x[2].length()).max().orElse(6));
        String format = "%-5s %-" + titleWidth + "s  %-" + fabricWidth + "s  %s%n";
        out.println();
        out.printf(format, "rung", "isolation", "FABRIC", "POSIX_FD");
        for (String[] row : rows) {
            out.printf(format, (Object[]) row);
        }
        List<String> notes = new ArrayList<>();
        for (RungResult rung : r.rungs()) {
            for (Cell c : rung.results()) {
                if (c.status() == Status.SKIPPED || c.status() == Status.ERROR) {
                    // Both handle types are usually skipped for one reason: say it once.
                    String line = rung.rung().label() + " " + (c.status() == Status.ERROR ? "could not run: "
                            : "skipped: ") + c.reason();
                    if (!notes.contains(line)) {
                        notes.add(line);
                    }
                }
            }
        }
        if (!notes.isEmpty()) {
            out.println();
            notes.forEach(n -> out.println("  " + n));
        }
        out.println();
        Finding v = r.verdict();
        out.printf("verdict [%s] %s%n  %s%n  remedy: %s%n", v.severity().label(), v.code(), v.cause(), v.remedy());
        for (Finding f : r.findings()) {
            if (f != v) {
                out.printf("also [%s] %s: %s%n", f.severity().label(), f.code(), f.cause());
            }
        }
        out.printf("%nexit %d (%s)%n", r.exitCode(), switch (r.exitCode()) {
            case LadderReport.OK -> "every rung that ran passed";
            case LadderReport.FAILED -> "a rung failed";
            default -> "could not tell";
        });
    }

    private static String human(long bytes) {
        return bytes % (1L << 30) == 0 ? (bytes >> 30) + " GiB" : bytes % (1L << 20) == 0 ? (bytes >> 20) + " MiB"
                : bytes + " bytes";
    }

    private static Cell cell(RungResult rung, HandleType type) {
        return rung.results().stream().filter(c -> c.handleType() == type).findFirst().orElse(null);
    }

    static String text(Cell c) {
        if (c == null) {
            return "-";
        }
        return switch (c.status()) {
            case PASS -> c.failedStage() != null && !"pass".equals(c.expected())
                    ? "pass (" + c.failedStage().name().label() + " " + c.failedStage().cuResult() + " as expected)"
                    : "pass";
            case FAIL -> "FAIL " + c.outcome();
            case SKIPPED -> "skipped";
            case ERROR -> "ERROR (below)";
        };
    }
}
