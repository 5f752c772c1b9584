package dev.imexprobe.preflight;

import java.util.List;

/** This instance's own status, as GET /v1/preflight serves it; moved forward by {@link PreflightRun}. */
public final class PreflightState {

    private volatile PreflightStatus status;

    PreflightState(Instance self) {
        this.status = new PreflightStatus(self, PreflightStatus.Phase.GATHERING, null);
    }

    public PreflightStatus status() {
        return status;
    }

    Instance self() {
        return status.instance();
    }

    void probing() {
        status = new PreflightStatus(self(), PreflightStatus.Phase.PROBING, null);
    }

    void done(List<PreflightPair> pairs) {
        status = new PreflightStatus(self(), PreflightStatus.Phase.DONE, List.copyOf(pairs));
    }

    void collected() {
        status = new PreflightStatus(self(), PreflightStatus.Phase.COLLECTED, status.pairs());
    }
}
