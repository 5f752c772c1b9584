package dev.imexprobe.ladder;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which device node belongs to which GPU, so rung 4 can hide exactly the others. On the real driver
 * /dev/nvidiaN's N is the GPU's device minor, which /proc/driver/nvidia/gpus/&lt;bus id&gt;/information states;
 * it is not the CUDA ordinal. On the fake, GPU k of a process that sees them all is the k-th {@code nvidiaN} of
 * FAKECUDA_DEV_DIR by N (the fake numbers physical GPUs that way).
 *
 * @param nodes      GPU UUID → device node name ({@code nvidia3})
 * @param procEntries GPU UUID → its /proc/driver/nvidia/gpus entry name (real driver only; empty on the fake)
 * @param problem    why the map could not be made (then rung 4 is skipped with it); null when it could
 */
record GpuDeviceNodes(Map<String, String> nodes, Map<String, String> procEntries, String problem) {

    private static final Pattern MINOR = Pattern.compile("(?m)^Device Minor:\\s*(\\d+)\\s*$");
    private static final Pattern BUS_ID =
            Pattern.compile("([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})\\.([0-7])");

    /** One GPU as the scout reported it. */
    record Gpu(int index, String uuid, String pciBusId) {
    }

    static GpuDeviceNodes unknown(String problem) {
        return new GpuDeviceNodes(Map.of(), Map.of(), problem);
    }

    /** The fake: FAKECUDA_DEV_DIR's nvidiaN entries, in order, are the GPUs the scout saw, in order. */
    static GpuDeviceNodes fake(Path devDir, List<Gpu> gpus) {
        List<String> present = ProcessView.entries(devDir, Pattern.compile("nvidia(0|[1-9][0-9]{0,8})"), false);
        if (present.size() != gpus.size()) {
            return unknown("cannot tell which nvidiaN in " + devDir + " is which GPU: it holds " + present.size()
                    + " for " + gpus.size() + " GPUs");
        }
        Map<String, String> nodes = new LinkedHashMap<>();
        for (Gpu g : gpus) {
            nodes.put(g.uuid(), present.get(g.index()));
        }
        return new GpuDeviceNodes(nodes, Map.of(), null);
    }

    /** The real driver: the minor from each GPU's /proc/driver/nvidia/gpus/&lt;bus id&gt;/information. */
    static GpuDeviceNodes real(Path procGpus, List<Gpu> gpus) {
        List<String> entries = ProcessView.entries(procGpus, null, false);
        if (entries.isEmpty()) {
            return unknown("cannot tell which /dev/nvidiaN is which GPU: " + procGpus + " is missing or empty");
        }
        Map<String, String> nodes = new LinkedHashMap<>();
        Map<String, String> proc = new LinkedHashMap<>();
        for (Gpu g : gpus) {
            String bus = canonicalBusId(g.pciBusId());
            String entry = entries.stream().filter(e -> bus != null && bus.equals(canonicalBusId(e))).findFirst()
                    .orElse(null);
            if (entry == null) {
                return unknown("cannot tell which /dev/nvidiaN is GPU " + g.index() + ": no entry for its bus id "
                        + g.pciBusId() + " in " + procGpus);
            }
            Path info = procGpus.resolve(entry).resolve("information");
            try {
                Matcher m = MINOR.matcher(Files.readString(info));
                if (!m.find()) {
                    return unknown(info + " has no 'Device Minor:' line, so GPU " + g.index()
                            + "'s device node is unknown");
                }
                nodes.put(g.uuid(), "nvidia" + Integer.parseInt(m.group(1)));
                proc.put(g.uuid(), entry);
            } catch (IOException | RuntimeException e) {
                return unknown("cannot read " + info + ": " + e.getMessage());
            }
        }
        return new GpuDeviceNodes(nodes, proc, null);
    }

    /**
     * A PCI bus id in one spelling ({@code 00000000:18:00.0}), since CUDA writes {@code 0000:18:00.0} in upper
     * case, nvidia-smi an 8-digit domain and /proc lower case; null when it is not one.
     */
    static String canonicalBusId(String text) {
        if (text == null) {
            return null;
        }
        Matcher m = BUS_ID.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        return String.format(Locale.ROOT, "%08x:%02x:%02x.%s", Long.parseLong(m.group(1), 16),
                Integer.parseInt(m.group(2), 16), Integer.parseInt(m.group(3), 16), m.group(4));
    }
}
