package dev.imexprobe.node;

/** What the local IMEX daemon looks like from this node, judged from its config file and nvidia-imex-ctl. */
public enum ImexDaemonState {
    /** Neither nvidia-imex-ctl nor the config file: IMEX is not installed (fine for single-node FABRIC). */
    NOT_INSTALLED,
    /** A config file but no nvidia-imex-ctl to ask the daemon with: state unknown. */
    CONFIG_ONLY,
    /** {@code nvidia-imex-ctl -q} printed READY. */
    READY,
    /** {@code nvidia-imex-ctl -q} ran and printed anything else (kept in the report). */
    NOT_READY,
    /** {@code nvidia-imex-ctl -q} did not finish within the bound and was killed with its process tree. */
    TIMEOUT,
    /** nvidia-imex-ctl could not be started. */
    ERROR
}
