package dev.imexprobe.finding;

import dev.imexprobe.testing.Markdown;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/findings.md, the runbook, against the catalogue ({@link FindingCode}) and against the alerts that link to
 * it (helm/imexprobe/templates/_rules.tpl): a section per code with its severity and blame, none for a code that
 * does not exist, and an anchor for every alert's runbook_url.
 */
class FindingsDocTest {

    private static final Path DOC = Path.of("docs", "findings.md");
    private static final Path RULES = Path.of("helm", "imexprobe", "templates", "_rules.tpl");
    private static final Pattern CODE_HEADING = Pattern.compile("^### ([A-Z][A-Z0-9_]*)$");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6}) (.+)$");
    private static final Pattern SEVERITY_BLAME =
            Pattern.compile("^\\*\\*Severity:\\*\\* `(\\w+)` · \\*\\*Blame:\\*\\* `(\\w+)`$");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([A-Za-z]+)}");

    static List<String> lines;
    /** Code → the lines of its section. */
    static final Map<String, List<String>> SECTIONS = new LinkedHashMap<>();
    /** GitHub's anchors of every heading (links within the page are checked with every page's: DocsLinksTest). */
    static final Set<String> ANCHORS = new LinkedHashSet<>();

    @BeforeAll
    static void read() throws IOException {
        lines = Files.readAllLines(DOC);
        ANCHORS.addAll(Markdown.anchors(lines));
        String current = null;
        for (String line : lines) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                Matcher c = CODE_HEADING.matcher(line);
                current = c.matches() ? c.group(1) : null;
                if (current != null) {
                    assertThat(SECTIONS.put(current, new java.util.ArrayList<>())).as("one section for %s", current)
                            .isNull();
                }
                continue;
            }
            if (current != null) {
                SECTIONS.get(current).add(line);
            }
        }
    }

    @Test
    void everyCodeHasASectionAndNoSectionNamesAnUnknownCode() {
        Set<String> codes = new LinkedHashSet<>(Arrays.stream(FindingCode.values()).map(Enum::name).toList());

        assertThat(SECTIONS.keySet()).containsExactlyInAnyOrderElementsOf(codes);
    }

    @Test
    void eachSectionStatesTheCataloguesSeverityAndBlame() {
        for (FindingCode code : FindingCode.values()) {
            List<String> section = SECTIONS.get(code.name());
            assertThat(section).as(code.name()).isNotNull();
            Matcher m = section.stream().map(SEVERITY_BLAME::matcher).filter(Matcher::matches).findFirst()
                    .orElseThrow(() -> new AssertionError(code + ": no **Severity:** `…` · **Blame:** `…` line"));
            assertThat(m.group(1)).as("severity of %s", code).isEqualTo(code.severity().label());
            assertThat(m.group(2)).as("blame of %s", code).isEqualTo(code.blame().label());
        }
    }

    @Test
    void eachSectionSaysWhatItMeansItsEvidenceAndTheRemedy() {
        for (Map.Entry<String, List<String>> e : SECTIONS.entrySet()) {
            String text = String.join("\n", e.getValue());
            assertThat(text).as(e.getKey()).contains("**Means:** ", "**Evidence:** ", "**Remedy:** ");
        }
    }

    @Test
    void everyEvidenceNameTheCatalogueTextsUseIsDocumented() {
        for (FindingCode code : FindingCode.values()) {
            String evidence = paragraph(SECTIONS.get(code.name()), "**Evidence:** ");
            Matcher m = PLACEHOLDER.matcher(code.causeTemplate() + " " + code.remedyTemplate());
            while (m.find()) {
                assertThat(evidence).as("evidence of %s names {%s}", code, m.group(1)).contains("`" + m.group(1) + "`");
            }
        }
    }

    @Test
    void everyAlertOfTheChartHasItsRunbookSection() throws IOException {
        String rules = Files.readString(RULES);
        Matcher alert = Pattern.compile("- alert: (\\w+)").matcher(rules);
        Matcher runbook = Pattern.compile("docs/findings\\.md#|\"%s#([a-z]+)\"").matcher(rules);
        Set<String> alerts = new LinkedHashSet<>();
        while (alert.find()) {
            alerts.add(alert.group(1));
        }
        Set<String> linked = new LinkedHashSet<>();
        while (runbook.find()) {
            if (runbook.group(1) != null) {
                linked.add(runbook.group(1));
            }
        }

        assertThat(alerts).hasSize(9);
        assertThat(linked).containsExactlyInAnyOrderElementsOf(
                alerts.stream().map(a -> a.toLowerCase(Locale.ROOT)).toList());
        assertThat(ANCHORS).containsAll(linked).contains("imexprobepairimportfailing", "imexprobetargetunreachable",
                "imexprobeagentdown", "imexprobeprobesstale", "imexprobenoimexchannel", "imexprobedrivercallstuck",
                "imexprobedomainfailing", "imexprobefabricunhealthy", "imexprobepairimportintermittent");
    }

    /** The text of the paragraph that starts with {@code start}, up to the next blank line. */
    private static String paragraph(List<String> section, String start) {
        StringBuilder b = new StringBuilder();
        boolean in = false;
        for (String line : section) {
            if (line.startsWith(start)) {
                in = true;
            } else if (in && line.isBlank()) {
                break;
            }
            if (in) {
                b.append(line).append('\n');
            }
        }
        assertThat(b).as("a paragraph starting %s", start).isNotEmpty();
        return b.toString();
    }
}
