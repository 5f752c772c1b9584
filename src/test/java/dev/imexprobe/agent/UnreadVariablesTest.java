package dev.imexprobe.agent;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The warning for variables no setting reads: which variables it names, and the setting it suggests. */
class UnreadVariablesTest {

    private final Random random = new Random();

    private static Set<String> agentVariables() {
        Set<String> known = new TreeSet<>();
        UnreadVariables.addVariables(known, "imexprobe", AgentProperties.class);
        UnreadVariables.addVariables(known, "imexprobe.node-condition", NodeConditionProperties.class);
        return known;
    }

    @Test
    void theSettingsVariablesComeFromTheRecordsAsRelaxedBindingNamesThem() {
        assertThat(agentVariables()).contains("IMEXPROBE_MESH_INTERVAL", "IMEXPROBE_AUTH_TOKEN",
                        "IMEXPROBE_PEERS_STATIC", // @Name("static") on the constructor's parameter, not the component's name
                        "IMEXPROBE_PEERS_KUBERNETES_PORT", "IMEXPROBE_DRIVER_CONTEXTLINGER",
                        "IMEXPROBE_DRIVER_PROBEEXCLUSIVEPROCESS", "IMEXPROBE_NODECONDITION_ENABLED")
                .doesNotContain("IMEXPROBE_PEERS_STATICLIST", "IMEXPROBE_MESH", "IMEXPROBE_DRIVER_CONTEXT-LINGER")
                .allMatch(v -> v.matches("IMEXPROBE_[A-Z0-9_]+"));
    }

    /** A variable one or two edits from a setting's is named with that setting; one read, or not ours, is not named. */
    @RepeatedTest(20)
    void aMisspeltVariableIsNamedWithTheNearestSetting() {
        List<String> known = List.copyOf(agentVariables());
        String meant = known.get(random.nextInt(known.size()));
        String typo = misspell(meant);
        String read = known.get(random.nextInt(known.size()));
        Set<String> set = new TreeSet<>(List.of(typo, read, "PATH", "IMEXPROBE_CUDA_LIBRARY", "SERVER_PORT"));
        List<String> lines = UnreadVariables.unread(set, Set.of(read), Set.copyOf(known));
        if (known.contains(typo)) { // the edit made another setting's name: read or not, it is a setting
            assertThat(lines).hasSizeLessThanOrEqualTo(1);
            return;
        }
        assertThat(lines).as("%s → %s", meant, typo).hasSize(1);
        String line = lines.getFirst();
        assertThat(line).startsWith(typo + " is set, but no setting of imexprobe reads it, so it changes nothing")
                .contains("docs/deploy.md");
        int best = known.stream().mapToInt(k -> UnreadVariables.distance(k, typo)).min().orElseThrow();
        String suggested = line.replaceFirst(".*did you mean (\\S+)\\?.*", "$1");
        assertThat(UnreadVariables.distance(suggested, typo)).as(line).isEqualTo(best);
        assertThat(best).isLessThanOrEqualTo(UnreadVariables.distance(meant, typo));
    }

    @Test
    void aVariableFarFromEverySettingIsNamedWithoutASuggestion() {
        assertThat(UnreadVariables.unread(Set.of("IMEXPROBE_SOMETHING_ELSE_ENTIRELY"), Set.of(), agentVariables()))
                .containsExactly("IMEXPROBE_SOMETHING_ELSE_ENTIRELY is set, but no setting of imexprobe reads it, so it"
                        + " changes nothing; docs/deploy.md (Values overview) lists the settings and their variables");
        assertThat(UnreadVariables.unread(Set.of("HOME", "IMEXPROBE_NVML_LIBRARY"), Set.of(), agentVariables()))
                .isEmpty();
        // Services named imexprobe and imexprobe-agent in the namespace, with service links on
        assertThat(UnreadVariables.unread(Set.of("IMEXPROBE_SERVICE_HOST", "IMEXPROBE_SERVICE_PORT",
                "IMEXPROBE_SERVICE_PORT_HTTP", "IMEXPROBE_PORT", "IMEXPROBE_PORT_8080_TCP", "IMEXPROBE_PORT_8080_TCP_PROTO",
                "IMEXPROBE_PORT_8080_TCP_PORT", "IMEXPROBE_AGENT_SERVICE_HOST", "IMEXPROBE_AGENT_PORT_8080_TCP_ADDR"),
                Set.of(), agentVariables())).isEmpty();
        // a misspelt setting that ends like a service link is still named: no such service is linked
        for (String typo : List.of("IMEXPROBE_PEERS_KUBERNETES_PORTT", "IMEXPROBE_PPEERS_KUBERNETES_PORT")) {
            assertThat(UnreadVariables.unread(Set.of(typo, "IMEXPROBE_SERVICE_HOST"), Set.of(), agentVariables()))
                    .as(typo).singleElement().asString().contains("did you mean IMEXPROBE_PEERS_KUBERNETES_PORT?");
        }
    }

    @Test
    void distanceCountsEdits() {
        assertThat(UnreadVariables.distance("IMEXPROBE_MESH_INTERVAL", "IMEXPROBE_MESH_INTERVALL")).isEqualTo(1);
        assertThat(UnreadVariables.distance("TIMEOUT", "TIMOUT")).isEqualTo(1);
        assertThat(UnreadVariables.distance("STATIC", "STAITC")).isEqualTo(2);
        assertThat(UnreadVariables.distance("", "ABC")).isEqualTo(3);
        assertThat(UnreadVariables.distance("SAME", "SAME")).isZero();
    }

    /** One edit after the prefix: a letter dropped, doubled, changed, or two neighbours swapped. */
    private String misspell(String name) {
        int at = "IMEXPROBE_".length() + random.nextInt(name.length() - "IMEXPROBE_".length() - 1);
        char other = (char) ('A' + random.nextInt(26));
        return switch (random.nextInt(4)) {
            case 0 -> name.substring(0, at) + name.substring(at + 1);
            case 1 -> name.substring(0, at) + name.charAt(at) + name.substring(at);
            case 2 -> name.substring(0, at) + other + name.substring(at + 1);
            default -> name.substring(0, at) + name.charAt(at + 1) + name.charAt(at) + name.substring(at + 2);
        };
    }
}
