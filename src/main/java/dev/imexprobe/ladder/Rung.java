package dev.imexprobe.ladder;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The rungs of the isolation ladder, in order. Rungs 0–4 add one isolation step each, the way a container
 * runtime builds them up; rung 5 changes only the IMEX channel view, on rung 1's setup, so it runs on one GPU
 * and its answer does not depend on rungs 2–4.
 */
public enum Rung {
    ONE_PROCESS("0", "one process",
            "export and import in the same worker process on GPU A (what a self-probe, or NCCL importing its own "
                    + "handle, proves)"),
    TWO_PROCESSES("1", "two processes, same GPU, all GPUs visible",
            "exporter and importer are separate processes on GPU A; nothing is hidden"),
    TWO_GPUS("2", "two processes, GPU A -> GPU B, all GPUs visible",
            "the exporter allocates on GPU A, the importer maps on GPU B; both processes see every GPU"),
    VISIBLE_DEVICES("3", "+ CUDA_VISIBLE_DEVICES: each process sees only its own GPU",
            "as rung 2, with CUDA_VISIBLE_DEVICES set to the exporter's GPU for the exporter and to the importer's "
                    + "GPU for the importer"),
    DEVICE_NODES("4", "+ device nodes: the other GPUs' /dev/nvidiaN hidden",
            "as rung 3, and each process runs in its own mount namespace where the other GPUs' /dev/nvidiaN and "
                    + "/proc/driver/nvidia/gpus/<bus id> entries are hidden, as a container runtime does"),
    SAME_CHANNEL("5a", "channel view: both see only the same channel",
            "as rung 1, with both processes seeing one and the same IMEX channel and no other (expected to work)"),
    OTHER_CHANNEL("5b", "channel view: exporter and importer see different channels",
            "as rung 1, with the exporter seeing only one IMEX channel and the importer only another (expected: "
                    + "import fails with 800 NOT_PERMITTED, as measured on an H200)");

    private final String label;
    private final String title;
    private final String setup;

    Rung(String label, String title, String setup) {
        this.label = label;
        this.title = title;
        this.setup = setup;
    }

    @JsonValue
    public String label() {
        return label;
    }

    public String title() {
        return title;
    }

    /** What the rung changes, in a sentence (for the docs and the JSON). */
    public String setup() {
        return setup;
    }

    /** Rungs 1–4 and 5a/5b run exporter and importer in two processes; rung 0 in one. */
    public boolean twoProcesses() {
        return this != ONE_PROCESS;
    }

    /** Rungs 2–4 put exporter and importer on different GPUs. */
    public boolean needsTwoGpus() {
        return this == TWO_GPUS || this == VISIBLE_DEVICES || this == DEVICE_NODES;
    }
}
