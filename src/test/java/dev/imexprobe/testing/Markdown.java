package dev.imexprobe.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the docs' tests read of a Markdown page: its headings' anchors and its links, outside fenced code. */
public final class Markdown {

    private static final Pattern HEADING = Pattern.compile("^(#{1,6}) (.+)$");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    /** A link as written on a page, and its line (1-based). */
    public record Link(int line, String target) {
    }

    private Markdown() {
    }

    /** GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces to dashes. */
    public static String slug(String heading) {
        return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    /** The anchors of every heading, as GitHub makes them (a repeated heading gets -1, -2, …). */
    public static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : lines) {
            if (line.startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher h = HEADING.matcher(line);
            if (!fenced && h.matches()) {
                String slug = slug(h.group(2));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return anchors;
    }

    /** Every inline link's target outside fenced code: {@code [text](target)}. */
    public static List<Link> links(List<String> lines) {
        List<Link> links = new ArrayList<>();
        boolean fenced = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher m = LINK.matcher(line);
            while (!fenced && m.find()) {
                links.add(new Link(i + 1, m.group(1)));
            }
        }
        return links;
    }
}
