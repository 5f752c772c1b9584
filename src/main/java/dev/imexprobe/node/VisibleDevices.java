package dev.imexprobe.node;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code CUDA_VISIBLE_DEVICES} as the driver reads it: a comma list of indices or UUIDs, cut at the first invalid
 * entry (CUDA's documented rule: only the devices before an invalid one are visible). An index past the device
 * count is also invalid to the driver; that needs the GPU count, so callers holding it decide.
 *
 * @param raw          the value, null when unset (all GPUs visible)
 * @param set          the variable is set (an empty value hides every GPU)
 * @param entries      the entries the driver honours, in order
 * @param invalidEntry the first entry that is neither an index nor a UUID, null when none
 * @param ignored      that entry and everything after it, which the driver ignores
 */
public record VisibleDevices(String raw, boolean set, List<Entry> entries, String invalidEntry,
                             List<String> ignored) {

    public static final String VARIABLE = "CUDA_VISIBLE_DEVICES";

    // Indices are decimal; UUIDs as nvidia-smi prints them, where a unique prefix is allowed ("GPU-8932f937").
    // MIG devices come as MIG-<uuid> or the older MIG-GPU-<uuid>/<gi>/<ci>.
    private static final Pattern INDEX = Pattern.compile("[0-9]{1,9}");
    private static final Pattern GPU_UUID = Pattern.compile("GPU-[0-9a-fA-F][0-9a-fA-F-]*");
    private static final Pattern MIG_UUID = Pattern.compile("MIG-[0-9a-zA-Z][0-9a-zA-Z/-]*");

    public enum Kind { INDEX, GPU_UUID, MIG_UUID }

    /**
     * One honoured entry.
     *
     * @param value the entry as written (surrounding spaces removed)
     * @param kind  index or UUID
     * @param index the index, null for a UUID
     */
    public record Entry(String value, Kind kind, Integer index) {
    }

    public VisibleDevices {
        entries = entries == null ? List.of() : List.copyOf(entries);
        ignored = ignored == null ? List.of() : List.copyOf(ignored);
    }

    public static VisibleDevices from(Map<String, String> env) {
        return parse(env.get(VARIABLE));
    }

    public static VisibleDevices parse(String raw) {
        if (raw == null) {
            return new VisibleDevices(null, false, List.of(), null, List.of());
        }
        // -1 keeps the trailing empty entry of "0,1," so it is reported as what stops the list.
        String[] parts = raw.split(",", -1);
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            // Surrounding spaces are dropped: an assumption about the driver, not something measured.
            String value = parts[i].strip();
            Entry entry = entry(value);
            if (entry == null) {
                List<String> rest = Arrays.stream(parts, i, parts.length).map(String::strip).toList();
                return new VisibleDevices(raw, true, entries, value, rest);
            }
            entries.add(entry);
        }
        return new VisibleDevices(raw, true, entries, null, List.of());
    }

    private static Entry entry(String value) {
        if (INDEX.matcher(value).matches()) {
            return new Entry(value, Kind.INDEX, Integer.parseInt(value));
        }
        if (GPU_UUID.matcher(value).matches()) {
            return new Entry(value, Kind.GPU_UUID, null);
        }
        if (MIG_UUID.matcher(value).matches()) {
            return new Entry(value, Kind.MIG_UUID, null);
        }
        return null;
    }
}
