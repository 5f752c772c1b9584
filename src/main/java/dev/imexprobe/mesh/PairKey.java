package dev.imexprobe.mesh;

/** An ordered GPU pair: source exports, target imports. GPUs are UUIDs ("unknown" before a peer answers). */
public record PairKey(String sourceNode, String sourceGpu, String targetNode, String targetGpu)
        implements Comparable<PairKey> {

    public static final String UNKNOWN_GPU = "unknown";

    @Override
    public int compareTo(PairKey o) {
        int c = sourceNode.compareTo(o.sourceNode);
        if (c == 0) {
            c = sourceGpu.compareTo(o.sourceGpu);
        }
        if (c == 0) {
            c = targetNode.compareTo(o.targetNode);
        }
        return c != 0 ? c : targetGpu.compareTo(o.targetGpu);
    }
}
