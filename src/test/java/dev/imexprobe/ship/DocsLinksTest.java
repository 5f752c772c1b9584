package dev.imexprobe.ship;

import dev.imexprobe.testing.Markdown;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the project's Markdown (the README, docs/, the chart's and the native folders' pages)
 * leads somewhere: a file or folder of the project, and, with {@code #anchor}, a heading of that page.
 */
class DocsLinksTest {

    static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        try (Stream<Path> all = Files.walk(Project.ROOT)) {
            all.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> {
                        String rel = Project.ROOT.relativize(p).toString();
                        return !rel.startsWith("target") && !rel.startsWith(".") && !rel.contains("/.")
                                && !rel.contains("node_modules");
                    })
                    .sorted().forEach(pages::add);
        }
        return pages;
    }

    @Test
    void everyRelativeLinkLeadsToAFileAndEveryAnchorToAHeading() throws IOException {
        List<Path> pages = pages();
        assertThat(pages).as("the pages read").contains(Project.ROOT.resolve("README.md"),
                Project.ROOT.resolve("docs/findings.md"), Project.ROOT.resolve("docs/performance.md"));
        Map<Path, Set<String>> anchors = new TreeMap<>();
        for (Path p : pages) {
            anchors.put(p.normalize(), Markdown.anchors(Files.readAllLines(p)));
        }
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            for (Markdown.Link link : Markdown.links(Files.readAllLines(page))) {
                String t = link.target();
                if (t.matches("[a-z][a-z0-9+.-]*:.*")) {
                    continue; // https:, mailto: and the like: not ours to check here
                }
                int hash = t.indexOf('#');
                String file = hash < 0 ? t : t.substring(0, hash);
                String anchor = hash < 0 ? null : t.substring(hash + 1);
                Path target = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                String where = Project.ROOT.relativize(page) + ":" + link.line() + ": " + t;
                checked++;
                if (!target.startsWith(Project.ROOT) || !Files.exists(target)) {
                    broken.add(where + " (no such file)");
                } else if (anchor != null && anchors.containsKey(target) && !anchors.get(target).contains(anchor)) {
                    broken.add(where + " (no such heading)");
                }
            }
        }
        assertThat(checked).as("links checked").isGreaterThan(100);
        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void anchorsFollowGitHubsRules() {
        List<String> page = List.of("# Top", "## The hot path after this round (issue 23)", "```", "# not a heading",
                "```", "## ImexprobeDriverCallStuck (warning)", "## Top", "### `check` — with a channel");
        assertThat(Markdown.anchors(page)).containsExactly("top", "the-hot-path-after-this-round-issue-23",
                "imexprobedrivercallstuck-warning", "top-1", "check--with-a-channel");
        assertThat(Markdown.links(List.of("see [a](b.md#c) and [d](#e)", "```", "[x](y)", "```")))
                .extracting(Markdown.Link::target).containsExactly("b.md#c", "#e");
    }
}
