package dev.imexprobe.node;

/**
 * The local IMEX daemon: config file, tool and the tool's answers. A cross-node import needs the daemons of both
 * nodes READY and connected; a single-node import does not need a daemon at all (measured on the H200).
 *
 * @param state         the overall judgement, see {@link ImexDaemonState}
 * @param detail        one line saying why that state, for people
 * @param configPath    the config.cfg inspected
 * @param configPresent it exists
 * @param config        its settings of interest, null when absent or unreadable (then {@code error} says why)
 * @param ctlPath       the nvidia-imex-ctl used, null when none was found
 * @param readiness     the run of {@code nvidia-imex-ctl -q}, null when not run
 * @param domainQuery   the run of {@code nvidia-imex-ctl -N -j}, null when not run
 * @param domain        the parsed domain view, null when {@code -N -j} did not finish
 * @param error         what failed in the inspection itself, null when nothing did
 */
public record ImexDaemon(
        ImexDaemonState state,
        String detail,
        String configPath,
        boolean configPresent,
        ImexConfig config,
        String ctlPath,
        ImexCtlRun readiness,
        ImexCtlRun domainQuery,
        ImexDomain domain,
        String error) {

    static ImexDaemon failed(String configPath, String error) {
        return new ImexDaemon(ImexDaemonState.ERROR, error, configPath, false, null, null, null, null, null, error);
    }
}
