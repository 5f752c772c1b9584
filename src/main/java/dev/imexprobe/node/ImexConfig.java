package dev.imexprobe.node;

import java.util.List;

/**
 * The settings of the IMEX daemon's config.cfg that matter for import/export across nodes.
 *
 * @param serverPort       {@code SERVER_PORT}: the port daemons talk to each other on (firewalls must pass it)
 * @param nodeConfigFile   {@code IMEX_NODE_CONFIG_FILE} (the daemon's default when unset): the domain's members
 * @param nodeAddressCount addresses listed in that file (non-blank, non-comment lines); null when unreadable
 * @param nodeConfigError  why the node file could not be read, null when it was
 * @param cmdPort          {@code IMEX_CMD_PORT}: nvidia-imex-ctl's port to the daemon
 * @param cmdEnabled       {@code IMEX_CMD_ENABLED}: without it nvidia-imex-ctl cannot query the daemon
 * @param problems         values that are missing or malformed, each with what to do
 */
public record ImexConfig(
        Integer serverPort,
        String nodeConfigFile,
        Integer nodeAddressCount,
        String nodeConfigError,
        Integer cmdPort,
        Boolean cmdEnabled,
        List<String> problems) {

    public ImexConfig {
        problems = problems == null ? List.of() : List.copyOf(problems);
    }
}
