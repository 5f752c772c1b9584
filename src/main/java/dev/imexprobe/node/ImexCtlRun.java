package dev.imexprobe.node;

import java.util.List;

/**
 * One bounded run of nvidia-imex-ctl.
 *
 * @param command         the argv run
 * @param pid             the process id, null when it could not be started
 * @param exitCode        null when it was killed or never started
 * @param stdout          what it printed (capped), never null
 * @param stderr          what it printed on stderr (capped), never null
 * @param timedOut        it outlived the bound and its process tree was killed
 * @param durationSeconds wall time of the call, the kill included
 * @param error           why it could not be started or waited for, null otherwise
 */
public record ImexCtlRun(
        List<String> command,
        Long pid,
        Integer exitCode,
        String stdout,
        String stderr,
        boolean timedOut,
        double durationSeconds,
        String error) {

    public ImexCtlRun {
        command = List.copyOf(command);
        stdout = stdout == null ? "" : stdout;
        stderr = stderr == null ? "" : stderr;
    }
}
