package dev.imexprobe;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/architecture.md's layer list is the rule for the product's packages: every {@code dev.imexprobe.*} package
 * has a line, each uses only the packages above it, and no two packages use each other. The list is read from the
 * document, so the document and the code cannot drift apart.
 */
class ArchitectureTest {

    private static final String ROOT = "dev.imexprobe";
    private static final Path DOC = Path.of("docs", "architecture.md");
    /** A line of the list: {@code name/} at the line's start; {@code (C)} after it marks a layer that is not Java. */
    private static final Pattern LAYER_LINE = Pattern.compile("^([a-z][a-z0-9]*)/(\\s+\\(C\\))?(\\s|$)");

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(ROOT);
    }

    /** Java packages in the document's order, top first (the first fenced block that holds layer lines). */
    static List<String> layersFromDoc(String doc) {
        List<String> layers = new ArrayList<>();
        boolean inBlock = false;
        for (String line : doc.split("\n", -1)) {
            if (line.startsWith("```")) {
                if (inBlock && !layers.isEmpty()) {
                    return layers;
                }
                inBlock = !inBlock;
                continue;
            }
            Matcher m = LAYER_LINE.matcher(line);
            if (inBlock && m.find() && m.group(2) == null) {
                layers.add(m.group(1));
            }
        }
        return layers;
    }

    private static List<String> layers() throws IOException {
        List<String> layers = layersFromDoc(Files.readString(DOC));
        assertThat(layers).as("the layer list in %s (lines starting `name/`)", DOC).isNotEmpty();
        assertThat(new TreeSet<>(layers)).as("packages named twice in %s's layer list", DOC).hasSameSizeAs(layers);
        return layers;
    }

    /** The package under dev.imexprobe a class belongs to ("" for the root package itself). */
    private static String topPackage(JavaClass c) {
        String p = c.getPackageName();
        if (p.equals(ROOT)) {
            return "";
        }
        if (!p.startsWith(ROOT + ".")) {
            return null;
        }
        String rest = p.substring(ROOT.length() + 1);
        int dot = rest.indexOf('.');
        return dot < 0 ? rest : rest.substring(0, dot);
    }

    private static Set<String> codePackages() {
        Set<String> packages = new TreeSet<>();
        for (JavaClass c : classes) {
            String p = topPackage(c);
            if (p != null) {
                packages.add(p);
            }
        }
        return packages;
    }

    @Test
    void theClassesWereFound() {
        assertThat(codePackages()).as("packages under %s in target/classes", ROOT).contains("cuda", "probe", "finding");
    }

    @Test
    void everyPackageHasALineInTheLayerList() throws IOException {
        List<String> layers = layers();
        List<String> missing = new ArrayList<>();
        for (String p : codePackages()) {
            if (!layers.contains(p)) {
                missing.add(p.isEmpty()
                        ? "classes directly in " + ROOT + ": put them in a package that has a line"
                        : "package " + ROOT + "." + p + " has no line in " + DOC + "'s layer list: add `" + p
                          + "/  <what it answers>` below every package it uses and above every package that uses it");
            }
        }
        assertThat(missing).as("packages missing from %s", DOC).isEmpty();
    }

    @Test
    void theLayerListNamesOnlyPackagesThatExist() throws IOException {
        Set<String> code = codePackages();
        List<String> stale = layers().stream().filter(l -> !code.contains(l))
                .map(l -> "`" + l + "/` in " + DOC + " is not a package under " + ROOT
                          + " (mark a layer that is not Java with `(C)` or similar after the name, or remove the line)")
                .toList();
        assertThat(stale).isEmpty();
    }

    @Test
    void eachLayerUsesOnlyTheLayersAboveIt() throws IOException {
        List<String> layers = layers();
        Map<String, List<String>> byPair = new TreeMap<>();
        for (JavaClass c : classes) {
            String from = topPackage(c);
            if (from == null || !layers.contains(from)) {
                continue; // reported by everyPackageHasALineInTheLayerList
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                String to = topPackage(d.getTargetClass());
                if (to == null || to.equals(from) || !layers.contains(to)) {
                    continue;
                }
                if (layers.indexOf(to) > layers.indexOf(from)) {
                    List<String> examples = byPair.computeIfAbsent(from + "/ uses " + to + "/", k -> new ArrayList<>());
                    if (examples.size() < 3) {
                        examples.add(d.getDescription());
                    }
                }
            }
        }
        List<String> violations = new ArrayList<>();
        byPair.forEach((pair, examples) -> violations.add(pair + ", which " + DOC
                + " lists below it; move the class or the line. e.g. " + String.join("; ", examples)));
        assertThat(violations).as("uses of a lower layer (docs/architecture.md: each layer uses only those above it)")
                .isEmpty();
    }

    @Test
    void noCyclesBetweenPackages() {
        EvaluationResult result = slices().matching(ROOT + ".(*)..").should().beFreeOfCycles()
                .evaluate(classes);
        assertThat(result.hasViolation()).as("package cycles:%n%s", result.getFailureReport()).isFalse();
    }

    @Test
    void theParserReadsOneLayerPerLineAndSkipsTheCLayer() {
        String doc = """
                intro
                ```
                native/ (C)     the shim
                finding/        findings
                cuda/           the driver
                ```
                ```
                later/          another block is not the list
                ```
                """;
        assertThat(layersFromDoc(doc)).containsExactly("finding", "cuda");
    }
}
