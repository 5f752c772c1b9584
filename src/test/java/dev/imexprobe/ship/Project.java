package dev.imexprobe.ship;

import java.nio.file.Files;
import java.nio.file.Path;

/** Paths of the shipped artefacts, from the project root (Maven runs tests there). */
final class Project {

    static final Path ROOT = findRoot();
    static final Path CHART = ROOT.resolve("helm/imexprobe");
    static final Path DOCKERFILE = ROOT.resolve("Dockerfile");
    static final Path DASHBOARD = ROOT.resolve("grafana/imexprobe.json");
    static final Path CHART_DASHBOARD = CHART.resolve("dashboards/imexprobe.json");
    static final Path NATIVE = ROOT.resolve("native");

    private Project() {
    }

    private static Path findRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("pom.xml")) && Files.isDirectory(p.resolve("helm"))) {
                return p;
            }
        }
        throw new IllegalStateException("no project root (pom.xml beside helm/) above " + dir);
    }
}
