package dev.imexprobe.args;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CommandLineTest {

    private static final Set<String> FLAGS = Set.of("--json", "--quiet");
    private static final Set<String> OPTIONS = Set.of("--size", "--deadline", "--gpus");

    private final long seed = new Random().nextLong();
    private final Random random = new Random(seed);

    /** Random options in a random order, each in either spelling. */
    private List<String> spell(Map<String, String> options, List<String> flags) {
        List<List<String>> parts = new ArrayList<>();
        options.forEach((name, value) -> parts.add(random.nextBoolean() ? List.of(name, value)
                : List.of(name + "=" + value)));
        flags.forEach(f -> parts.add(List.of(f)));
        Collections.shuffle(parts, random);
        return parts.stream().flatMap(List::stream).toList();
    }

    private Map<String, String> someOptions() {
        Map<String, String> options = new LinkedHashMap<>();
        for (String name : OPTIONS) {
            if (random.nextBoolean()) {
                // values may hold '=' (only the first one after the name splits) and look like anything
                options.put(name, List.of("7", "2=3", "0,1", "", "-1", "120s").get(random.nextInt(6)));
            }
        }
        return options;
    }

    @Test
    void eachOptionComesBackAsGivenInEitherSpellingAndOrder() {
        for (int round = 0; round < 500; round++) {
            Map<String, String> options = someOptions();
            List<String> flags = FLAGS.stream().filter(f -> random.nextBoolean()).toList();
            List<String> args = spell(options, flags);
            CommandLine c = CommandLine.parse(args.toArray(String[]::new), FLAGS, OPTIONS);
            for (String name : OPTIONS) {
                assertThat(c.value(name)).as("%s, seed %d", args, seed).isEqualTo(options.get(name));
                assertThat(c.has(name)).isEqualTo(options.containsKey(name));
            }
            for (String flag : FLAGS) {
                assertThat(c.has(flag)).as("%s, seed %d", args, seed).isEqualTo(flags.contains(flag));
            }
        }
    }

    @Test
    void anOptionGivenTwiceIsRefusedWhateverTheSpellingOrValues() {
        List<String> all = new ArrayList<>(OPTIONS);
        all.addAll(FLAGS);
        for (int round = 0; round < 500; round++) {
            String twice = all.get(random.nextInt(all.size()));
            Map<String, String> options = someOptions();
            options.remove(twice);
            List<String> flags = new ArrayList<>(FLAGS.stream().filter(f -> !f.equals(twice) && random.nextBoolean())
                    .toList());
            List<String> args = new ArrayList<>(spell(options, flags));
            for (int copy = 0; copy < 2; copy++) {
                List<String> one = FLAGS.contains(twice) ? List.of(twice)
                        : random.nextBoolean() ? List.of(twice, "1") : List.of(twice + "=" + random.nextInt(3));
                // between two whole options, so that no value is split from its name
                List<Integer> cuts = new ArrayList<>(List.of(0, args.size()));
                for (int i = 1; i < args.size(); i++) {
                    if (args.get(i).startsWith("--") && !OPTIONS.contains(args.get(i - 1))) {
                        cuts.add(i);
                    }
                }
                args.addAll(cuts.get(random.nextInt(cuts.size())), one);
            }
            assertThatThrownBy(() -> CommandLine.parse(args.toArray(String[]::new), FLAGS, OPTIONS))
                    .as("%s, seed %d", args, seed).hasMessage(twice + " is given twice; give it once");
        }
    }

    @Test
    void whatIsNotAnOptionOrLacksAValueIsNamed() {
        assertThatThrownBy(() -> CommandLine.parse(new String[] {"--json", "--fast"}, FLAGS, OPTIONS))
                .hasMessage("unknown option '--fast'");
        assertThatThrownBy(() -> CommandLine.parse(new String[] {"size=7"}, FLAGS, OPTIONS))
                .hasMessage("unknown option 'size=7'");
        assertThatThrownBy(() -> CommandLine.parse(new String[] {"--json", "--size"}, FLAGS, OPTIONS))
                .hasMessage("--size needs a value");
        assertThatThrownBy(() -> CommandLine.parse(new String[] {"--json=true"}, FLAGS, OPTIONS))
                .hasMessage("--json takes no value, got '--json=true'");
        // the word after a valued option is its value, even one that looks like an option
        assertThat(CommandLine.parse(new String[] {"--gpus", "--json"}, FLAGS, OPTIONS).value("--gpus"))
                .isEqualTo("--json");
    }

    @Test
    void numbersAreCheckedAgainstTheirRange() {
        for (int round = 0; round < 300; round++) {
            long min = random.nextInt(3);
            long max = min + 1 + random.nextInt(100);
            long v = min - 5 + random.nextInt((int) (max - min) + 10);
            CommandLine c = CommandLine.parse(new String[] {"--size=" + v}, FLAGS, OPTIONS);
            if (v >= min && v <= max) {
                assertThat(c.number("--size", min, max)).isEqualTo(v);
            } else {
                assertThatThrownBy(() -> c.number("--size", min, max))
                        .hasMessage("--size needs a whole number from " + min + " to " + max + ", got '" + v + "'");
            }
        }
        CommandLine none = CommandLine.parse(new String[0], FLAGS, OPTIONS);
        assertThat(none.number("--size", 1, 5)).isNull();
        assertThatThrownBy(() -> CommandLine.parse(new String[] {"--size", "zero"}, FLAGS, OPTIONS)
                .number("--size", 1, Long.MAX_VALUE)).hasMessage("--size needs a positive whole number, got 'zero'");
        assertThatThrownBy(() -> CommandLine.parse(new String[] {"--size", "3000000000"}, FLAGS, OPTIONS)
                .number("--size", 1, Integer.MAX_VALUE))
                .hasMessage("--size needs a positive whole number (at most 2147483647), got '3000000000'");
    }

    @Test
    void durationsTakeSpringsFormsAndABareNumberIsSeconds() {
        Map<String, Duration> good = Map.of("20s", Duration.ofSeconds(20), "500ms", Duration.ofMillis(500),
                "2m", Duration.ofMinutes(2), "PT2M", Duration.ofMinutes(2), "90", Duration.ofSeconds(90),
                " 3s ", Duration.ofSeconds(3), "1h", Duration.ofHours(1));
        good.forEach((text, want) -> assertThat(CommandLine.parse(new String[] {"--deadline", text}, FLAGS, OPTIONS)
                .duration("--deadline")).as(text).isEqualTo(want));
        for (String bad : List.of("0", "0s", "-5s", "soon", "", "5 s", "PT-1S", "99999999999999999999")) {
            assertThatThrownBy(() -> CommandLine.parse(new String[] {"--deadline=" + bad}, FLAGS, OPTIONS)
                    .duration("--deadline")).as(bad)
                    .hasMessage("--deadline needs a positive duration such as 20s, 2m or 500ms, got '" + bad + "'");
        }
        assertThat(CommandLine.parse(new String[0], FLAGS, OPTIONS).duration("--deadline")).isNull();
    }
}
