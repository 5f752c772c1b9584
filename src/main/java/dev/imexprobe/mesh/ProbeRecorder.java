package dev.imexprobe.mesh;

import dev.imexprobe.probe.PairResult;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Every pair result, from the mesh or from /probe, goes through here: into the mesh state and to listeners. */
public final class ProbeRecorder {

    /** Something that wants every result (the metrics). */
    public interface Listener {
        void onResult(PairResult result);

        /** A mesh round ended; pairs of departed peers are forgotten by now. */
        default void onCycleFinished() {
        }
    }

    private final MeshState state;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    public ProbeRecorder(MeshState state) {
        this.state = state;
    }

    public void addListener(Listener l) {
        listeners.add(l);
    }

    public MeshState state() {
        return state;
    }

    /** Marks the end of a mesh round in the state, then tells the listeners. */
    public void cycleFinished() {
        state.cycleFinished();
        for (Listener l : listeners) {
            l.onCycleFinished();
        }
    }

    public void record(PairResult r) {
        state.record(r);
        if (r.verdict() == dev.imexprobe.probe.Verdict.NOT_PROBED) {
            return; // nothing ran: no probe to count, no pair series (as for the mesh's own not-probed pairs)
        }
        for (Listener l : listeners) {
            l.onResult(r);
        }
    }
}
