package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The alerting rules exactly as the chart ships them (default values): promtool check rules, and promtool test
 * rules with src/test/resources/ship/alerts-test.yaml, which has a firing and a silent case for every alert.
 * Skips when promtool is not installed (CI installs Debian's prometheus package).
 */
class AlertRulesTest {

    static final List<String> ALERTS = List.of("ImexprobePairImportFailing", "ImexprobePairImportIntermittent",
            "ImexprobeTargetUnreachable", "ImexprobeDomainFailing",
            "ImexprobeAgentDown", "ImexprobeProbesStale", "ImexprobeNoImexChannel",
            "ImexprobeDriverCallStuck", "ImexprobeFabricUnhealthy");

    @TempDir
    static Path dir;
    static String unitTests;

    @BeforeAll
    static void renderShippedRules() throws Exception {
        Map<String, Object> rule = Chart.render(values("prometheusRule.enabled", true, "imex.channel.mode", "hostPath",
                "alerts.runbookBaseUrl", "https://runbooks.example.com/imexprobe/docs/findings.md")).one("PrometheusRule");
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        o.setWidth(10_000);
        Files.writeString(dir.resolve("rules.yaml"), new Yaml(o).dump(Map.of("groups", Chart.at(rule, "spec.groups"))));
        try (InputStream in = AlertRulesTest.class.getResourceAsStream("/ship/alerts-test.yaml")) {
            unitTests = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Files.writeString(dir.resolve("alerts-test.yaml"), unitTests);
    }

    @Test
    void unitTestFileCoversEveryAlertFiringAndSilent() throws Exception {
        String rules = Files.readString(dir.resolve("rules.yaml"));
        for (String alert : ALERTS) {
            assertThat(rules).contains("alert: " + alert);
            long cases = Pattern.compile("alertname: " + alert + "\\b").matcher(unitTests).results().count();
            assertThat(cases).as("test cases of %s", alert).isGreaterThanOrEqualTo(2);
        }
        // Every alert has a case where it must stay silent (exp_alerts: []) and one where it fires.
        for (String alert : ALERTS) {
            assertThat(unitTests).containsPattern("alertname: " + alert + "\\s+exp_alerts: \\[\\]");
            assertThat(unitTests).containsPattern("alertname: " + alert + "\\s+exp_alerts:\\s+- exp_labels:");
        }
        assertThat(rules).as("rules built for the shipped 30s interval").contains("> 90");
        // Not probed is never failed: no rule reads the count of pairs by state, and observers are left out.
        assertThat(rules).doesNotContain("imexprobe_pairs").contains("mode=\"observer\"");
    }

    @Test
    void promtoolChecksTheShippedRules() throws Exception {
        Path promtool = promtool();
        Tools.Result r = Tools.run(dir, 60, List.of(promtool.toString(), "check", "rules", "rules.yaml"));
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: " + ALERTS.size() + " rules found");
    }

    @Test
    void promtoolUnitTestsPass() throws Exception {
        Path promtool = promtool();
        Tools.Result r = Tools.run(dir, 120, List.of(promtool.toString(), "test", "rules", "alerts-test.yaml"));
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS").doesNotContain("FAILED");
    }

    @Test
    void promtoolUnitTestsCatchABrokenRule() throws Exception {
        Path promtool = promtool();
        // The same tests against rules whose pair alert waits 10m instead of 5m must fail: the tests can fail.
        Path broken = Files.createDirectories(dir.resolve("broken"));
        Files.writeString(broken.resolve("rules.yaml"),
                Files.readString(dir.resolve("rules.yaml")).replaceFirst("for: 5m", "for: 10m"));
        Files.writeString(broken.resolve("alerts-test.yaml"), unitTests);
        Tools.Result r = Tools.run(broken, 120, List.of(promtool.toString(), "test", "rules", "alerts-test.yaml"));
        assertThat(r.exitCode()).isNotZero();
        assertThat(r.output()).contains("FAILED").contains("ImexprobePairImportFailing");
    }

    private static Path promtool() {
        var found = Tools.onPath("promtool");
        assumeTrue(found.isPresent(), "promtool not installed (apt-get install -y --no-install-recommends prometheus): skipped");
        return found.get();
    }
}
