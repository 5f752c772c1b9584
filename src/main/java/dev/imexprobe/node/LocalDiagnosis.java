package dev.imexprobe.node;

import dev.imexprobe.cuda.DriverStatus;
import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.GpuInventory;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.finding.Severity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The findings a node's own evidence can name, before any probe: driver, GPUs, channels, daemon, fabric.
 * Ordered by severity, then as found.
 */
public final class LocalDiagnosis {

    private LocalDiagnosis() {
    }

    public static List<Finding> diagnose(DriverStatus driver, GpuInventory inventory, NodeFacts facts) {
        return diagnose(driver, inventory, facts, null);
    }

    /** As above; with a join clock (the agent), a fabric state that stays short of COMPLETED becomes stuck. */
    public static List<Finding> diagnose(DriverStatus driver, GpuInventory inventory, NodeFacts facts,
                                         FabricJoinClock joinClock) {
        List<Finding> out = new ArrayList<>();
        if (!driver.cudaLoaded()) {
            out.add(FindingCode.NO_DRIVER.finding(Map.of("reason", driver.unavailableReason())));
        } else {
            if (driver.isFake()) {
                out.add(FindingCode.SIMULATED.finding(Map.of("library", String.valueOf(driver.cudaLibrary()))));
            }
            gpus(driver, inventory, facts, joinClock, out);
        }
        channels(facts.imexChannels(), driver.isFake(), out);
        daemon(facts.imexDaemon(), out);
        out.sort((a, b) -> a.severity().compareTo(b.severity()));
        return List.copyOf(out);
    }

    /** A channel the driver will honour: readable, and a character device of the channel major (plain files: fake only). */
    public static boolean usable(ImexChannel c, ImexChannels all, boolean fake) {
        if (!c.readable()) {
            return false;
        }
        if (!c.charDevice()) {
            return fake;
        }
        return all.expectedMajor() == null || c.majorMatches();
    }

    public static long usableChannels(ImexChannels channels, boolean fake) {
        return channels.channels().stream().filter(c -> usable(c, channels, fake)).count();
    }

    private static void gpus(DriverStatus driver, GpuInventory inventory, NodeFacts facts, FabricJoinClock joinClock,
                             List<Finding> out) {
        if (!inventory.init().ok() || inventory.gpus().isEmpty()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("driverResult", inventory.init().name());
            e.put("visibleDevices", facts.visibleDevices().set() ? facts.visibleDevices().raw() : "(unset)");
            out.add(FindingCode.NO_GPU.finding(e));
            return;
        }
        boolean nvmlReported = false;
        for (GpuDevice g : inventory.gpus()) {
            // a GPU lacking VMM or FABRIC handles is the context policy's finding (cuda/ContextPolicy)
            FabricInfo f = g.fabric();
            if (f == null) {
                if (!nvmlReported) {
                    nvmlReported = true;
                    out.add(FindingCode.NVML_UNAVAILABLE.finding(Map.of("reason", driver.nvmlLoaded()
                            ? g.fabricResult().name() : String.valueOf(driver.nvmlMessage()))));
                }
                continue;
            }
            Finding fabric = fabric(g, f, joinClock);
            if (fabric != null) {
                out.add(fabric);
            }
        }
        Finding disagree = membersDisagree(inventory.gpus());
        if (disagree != null) {
            out.add(disagree);
        }
    }

    /**
     * The GPUs of one node share one NVSwitch tray and so one NVLink domain: registered GPUs that report different
     * cluster UUIDs or cliques mean a stale or wrong registration (DOMAIN_MEMBERS_DISAGREE), or null.
     */
    static Finding membersDisagree(List<GpuDevice> gpus) {
        Map<String, List<String>> byDomain = new java.util.TreeMap<>();
        for (GpuDevice g : gpus) {
            FabricInfo f = g.fabric();
            String d = dev.imexprobe.probe.ImexDomain.of(f, "");
            if (dev.imexprobe.probe.ImexDomain.isFabric(d)) {
                byDomain.computeIfAbsent(d, k -> new ArrayList<>()).add(Integer.toString(g.index()));
            }
        }
        if (byDomain.size() < 2) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        byDomain.forEach((d, idx) -> parts.add("GPU " + String.join(", ", idx) + " in " + d));
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("detail", "the GPUs of this node report different NVLink domains: " + String.join("; ", parts)
                + ". GPUs of one node share one NVLink domain");
        e.put("gpus", parts);
        return FindingCode.DOMAIN_MEMBERS_DISAGREE.finding(e);
    }

    /** The finding a GPU's NVML fabric registration makes, or null when it has nothing to say. */
    static Finding fabric(GpuDevice g, FabricInfo f, FabricJoinClock joinClock) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("gpu", g.index() + " (" + g.uuid() + ")");
        e.put("state", f.stateName());
        java.time.Duration held = joinClock != null ? joinClock.observe(g.uuid(), f.state()) : null;
        switch (f.state()) {
            case FabricInfo.STATE_NOT_SUPPORTED -> {
                return FindingCode.FABRIC_NOT_SUPPORTED.finding(e);
            }
            case FabricInfo.STATE_COMPLETED -> {
                e.put("status", f.statusName());
                e.put("health", f.health());
                e.put("summary", f.healthSummaryName());
                e.put("flags", f.problems());
                if (Boolean.FALSE.equals(f.healthy())) {
                    return FindingCode.FABRIC_UNHEALTHY.finding(e);
                }
                return f.degraded() ? FindingCode.FABRIC_DEGRADED.finding(e) : null;
            }
            default -> {
                if (held != null && joinClock.stuck(held)) {
                    e.put("seconds", held.toSeconds());
                    e.put("stuckAfterSeconds", joinClock.stuckAfter().toSeconds());
                    return FindingCode.FABRIC_STATE_STUCK.finding(e);
                }
                return FindingCode.FABRIC_NOT_COMPLETED.finding(e);
            }
        }
    }

    private static void channels(ImexChannels channels, boolean fake, List<Finding> out) {
        long usable = usableChannels(channels, fake);
        for (ImexChannel c : channels.channels()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("channel", channels.directory() + "/" + c.name());
            if (c.charDevice() && channels.expectedMajor() != null && !c.majorMatches()) {
                e.put("major", c.major());
                e.put("expectedMajor", channels.expectedMajor());
                out.add(FindingCode.CHANNEL_MAJOR_MISMATCH.finding(e));
            } else if (c.charDevice() && !c.minorMatches()) {
                e.put("minor", c.minor());
                out.add(FindingCode.CHANNEL_MINOR_MISMATCH.finding(e));
            }
            if (!c.readable() || (!c.charDevice() && !fake)) {
                e.put("error", !c.charDevice() && !fake ? "not a character device" : c.readError());
                // One usable channel is enough; a broken extra one is only worth a warning.
                out.add(FindingCode.CHANNEL_UNREADABLE.finding(usable > 0 ? Severity.WARNING : Severity.ERROR, e));
            }
        }
        if (usable == 0) {
            String state = channels.error() != null ? channels.error()
                    : !channels.exists() ? "the directory does not exist"
                    : channels.channels().isEmpty() ? "the directory holds no channelN entry"
                    : "none of its " + channels.channels().size() + " entries is usable";
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("channelDir", channels.directory());
            e.put("channelState", state);
            e.put("expectedMajor", channels.expectedMajor());
            out.add(FindingCode.NO_IMEX_CHANNEL.finding(e));
        }
    }

    private static void daemon(ImexDaemon d, List<Finding> out) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("state", d.state().name());
        e.put("detail", d.detail());
        switch (d.state()) {
            case NOT_INSTALLED, CONFIG_ONLY -> out.add(FindingCode.IMEX_DAEMON_ABSENT.finding(e));
            case NOT_READY, ERROR -> {
                e.put("query", d.readiness() != null ? firstLine(d.readiness().stdout()) : d.detail());
                out.add(FindingCode.IMEX_DAEMON_NOT_READY.finding(e));
            }
            case TIMEOUT -> {
                e.put("timeoutMillis", d.readiness() != null ? (long) (d.readiness().durationSeconds() * 1000) : null);
                out.add(FindingCode.IMEX_DAEMON_TIMEOUT.finding(e));
            }
            case READY -> {
                // nothing to say
            }
        }
    }

    private static String firstLine(String s) {
        if (s == null || s.isBlank()) {
            return "(no output)";
        }
        String t = s.strip();
        int nl = t.indexOf('\n');
        return nl < 0 ? t : t.substring(0, nl);
    }
}
