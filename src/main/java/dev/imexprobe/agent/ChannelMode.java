package dev.imexprobe.agent;

import java.util.List;

/**
 * imexprobe.channel.mode (IMEXPROBE_CHANNEL_MODE), as the chart sets it: {@code observer} (no channel by
 * configuration: node facts only, nothing probed, no context, no allocation), {@code hostPath} (the host's IMEX
 * channels) or {@code computeDomain} (a ComputeDomain's). The binary's default is {@code hostPath}: it probes with
 * whatever channel it is given.
 */
final class ChannelMode {

    static final List<String> MODES = List.of("observer", "hostPath", "computeDomain");

    private ChannelMode() {
    }

    static boolean observer(String mode) {
        if (!MODES.contains(mode)) {
            throw new IllegalArgumentException("imexprobe.channel.mode must be one of " + MODES + ", got '" + mode
                    + "' (IMEXPROBE_CHANNEL_MODE)");
        }
        return mode.equals("observer");
    }
}
