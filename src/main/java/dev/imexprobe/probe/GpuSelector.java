package dev.imexprobe.probe;

import java.util.List;
import java.util.Locale;

/**
 * Picks GPUs by index or UUID from a list of (index, uuid) pairs. A selector that matches nothing is the
 * caller's mistake, reported with the GPUs that do exist.
 */
public final class GpuSelector {

    /**
     * @param domain    its IMEX domain ({@link ImexDomain}); null when the agent did not say (then any)
     * @param notProbed the finding code its agent gave for creating no context on it (compute mode, MIG, no fabric
     *                  memory); null when it is probed
     */
    public record Gpu(int index, String uuid, String domain, String notProbed) {
        public Gpu(int index, String uuid) {
            this(index, uuid, null, null);
        }

        public Gpu(int index, String uuid, String domain) {
            this(index, uuid, domain, null);
        }
    }

    private GpuSelector() {
    }

    /** All GPUs when selector is null or blank; the one it names otherwise. */
    public static List<Gpu> select(String selector, List<Gpu> gpus, String whose) {
        if (selector == null || selector.isBlank()) {
            return gpus;
        }
        String s = selector.trim();
        for (Gpu g : gpus) {
            if (s.equals(Integer.toString(g.index())) || (g.uuid() != null
                    && g.uuid().toLowerCase(Locale.ROOT).equals(s.toLowerCase(Locale.ROOT)))) {
                return List.of(g);
            }
        }
        throw new IllegalArgumentException("no GPU '" + (s.length() > 64 ? s.substring(0, 64) + "…" : s) + "' on "
                + whose + " (it has " + gpus.stream().map(g -> g.index() + "=" + g.uuid()).toList() + ")");
    }
}
