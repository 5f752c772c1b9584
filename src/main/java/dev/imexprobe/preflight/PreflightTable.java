package dev.imexprobe.preflight;

import dev.imexprobe.finding.Finding;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.Verdict;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The report for humans: instances, a line per pair, the matrix, findings, verdict, next steps, exit code. */
final class PreflightTable {

    private PreflightTable() {
    }

    static void print(PrintStream out, PreflightReport r) {
        Map<String, Instance> byId = new LinkedHashMap<>();
        r.instances().forEach(i -> byId.put(i.id(), i));
        long failed = r.pairs().stream().filter(PreflightVerdict::failed).count();
        long unprobed = r.pairs().stream().filter(p -> !p.passed() && !PreflightVerdict.failed(p)).count();
        out.printf("imexprobe preflight: %s - %d of %d instances, %d pairs (exporter -> importer), %d passed, %d failed%s%n",
                r.result().toUpperCase(java.util.Locale.ROOT), r.instances().size(), r.expected(), r.pairs().size(),
                r.pairs().size() - failed - unprobed, failed, unprobed > 0 ? ", " + unprobed + " not probed" : "");
        out.println();
        out.println("instances");
        for (int k = 0; k < r.instances().size(); k++) {
            Instance i = r.instances().get(k);
            out.printf("  %-3s %-28s node %-20s %s%s%n", letter(k), i.name(), i.node(),
                    i.gpus() == null ? "" : String.join(",", i.gpus().stream().map(PreflightTable::shortGpu).toList()),
                    k == 0 ? "   (this one)" : "");
        }
        if (!r.pairs().isEmpty()) {
            out.println();
            out.println("pairs");
            for (PreflightPair p : r.pairs()) {
                out.println("  " + line(byId, p));
            }
            out.println();
            printMatrix(out, r, byId);
        }
        if (r.findings() != null && !r.findings().isEmpty()) {
            out.println();
            out.println("findings (by the instance they blame)");
            for (PreflightReport.Blamed b : r.findings()) {
                out.printf("  [%s] %s blames %s (node %s): %d pair(s), e.g. %s%n", b.finding().severity().label(),
                        b.finding().code(), b.instance(), b.node(), b.pairs(), String.join("; ", b.examples()));
            }
        }
        if (r.verdict() != null) {
            Finding v = r.verdict();
            out.println();
            out.printf("verdict [%s] %s%n  cause:  %s%n  remedy: %s%n", v.severity().label(), v.code(), v.cause(),
                    v.remedy());
        }
        if (r.nextSteps() != null && !r.nextSteps().isEmpty()) {
            out.println();
            r.nextSteps().forEach(s -> out.println("next: " + s));
        }
        out.println();
        out.printf("exit %d (%s) after %.1f s%n", r.exitCode(), switch (r.exitCode()) {
            case PreflightReport.PASS -> "every pair passed";
            case PreflightReport.FAIL -> "a pair failed";
            default -> "could not tell";
        }, r.durationSeconds());
    }

    /** One pair: verdict, who to whom, the failing stage and CUresult, the finding and whom it blames. */
    static String line(Map<String, Instance> byId, PreflightPair p) {
        PairResult r = p.result();
        String who = name(byId, p.exporter()) + " " + shortGpu(r.sourceGpu()) + " -> " + name(byId, p.importer()) + " "
                + shortGpu(r.targetGpu()) + (PreflightVerdict.sameNode(p) ? " (same node)" : "");
        if (r.passed()) {
            return String.format("pass  %s  %.0f ms", who, r.durationSeconds() * 1000);
        }
        Finding f = r.finding();
        String blamed = name(byId, PreflightVerdict.blamedId(p));
        String why = f != null ? "  " + f.code() + ", blame " + blamed : "";
        if (r.verdict() == Verdict.NOT_PROBED) {
            return "NOT PROBED  " + who + why;
        }
        StageResult s = r.firstFailure();
        String stage = s == null ? "?" : s.name().label() + " " + s.status().label()
                + (s.cuResultName() != null ? " " + s.cuResultName() + " (" + s.cuResult() + ")" : "");
        return "FAIL  " + who + "  " + stage + why;
    }

    private static void printMatrix(PrintStream out, PreflightReport r, Map<String, Instance> byId) {
        List<Instance> inst = r.instances();
        out.println("matrix (row exports, column imports; ok, n/p when not probed, or the first failing CUresult)");
        StringBuilder head = new StringBuilder("       ");
        for (int k = 0; k < inst.size(); k++) {
            head.append(String.format("%-8s", letter(k)));
        }
        out.println(head.toString().stripTrailing());
        for (int row = 0; row < inst.size(); row++) {
            StringBuilder line = new StringBuilder(String.format("  %-5s", letter(row)));
            for (int col = 0; col < inst.size(); col++) {
                line.append(String.format("%-8s", cell(r.pairs(), inst.get(row).id(), inst.get(col).id())));
            }
            out.println(line.toString().stripTrailing());
        }
    }

    private static String cell(List<PreflightPair> pairs, String exporter, String importer) {
        if (exporter.equals(importer)) {
            return "-";
        }
        List<PreflightPair> these = pairs.stream().filter(p -> p.exporter().equals(exporter)
                && p.importer().equals(importer)).toList();
        if (these.isEmpty()) {
            return "?";
        }
        for (PreflightPair p : these) {
            if (p.result().verdict() == Verdict.FAIL) {
                StageResult s = p.result().firstFailure();
                return s != null && s.cuResult() != null ? Integer.toString(s.cuResult()) : "FAIL";
            }
        }
        return these.stream().allMatch(PreflightPair::passed) ? "ok" : "n/p";
    }

    private static String letter(int k) {
        return k < 26 ? String.valueOf((char) ('A' + k)) : "I" + k;
    }

    private static String name(Map<String, Instance> byId, String id) {
        Instance i = byId.get(id);
        return i != null ? i.name() : id;
    }

    private static String shortGpu(String uuid) {
        if (uuid == null) {
            return "?";
        }
        return uuid.length() > 12 ? uuid.substring(0, 12) : uuid;
    }
}
