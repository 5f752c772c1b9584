package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/**
 * The stages of one fabric-memory exchange, in the order they run. This enum is the one place the sequence
 * is written down; every runner, document and metric takes its names from here.
 */
public enum Stage {
    CREATE("cuMemCreate on the exporter's GPU, then the exporter's own mapping and the pattern written into it"),
    EXPORT("cuMemExportToShareableHandle: 64 bytes for FABRIC, a descriptor for POSIX_FD"),
    TRANSFER("the handle's trip to the importer: HTTP between agents, a Unix socket on one host, nothing in one process"),
    IMPORT("cuMemImportFromShareableHandle on the importer's GPU"),
    RESERVE("cuMemAddressReserve of a virtual address range on the importer"),
    MAP("cuMemMap of the imported handle into that range"),
    ACCESS("cuMemSetAccess granting the importer's GPU read-write access"),
    VERIFY("read back through the imported mapping and compare with the exporter's pattern"),
    WRITEBACK("the importer writes a second pattern and the exporter checks it: write access across the fabric"),
    RELEASE("cuMemUnmap, cuMemAddressFree and cuMemRelease on both sides; the first failure is reported");

    private final String purpose;

    Stage(String purpose) {
        this.purpose = purpose;
    }

    /**
     * Whether the stage acts on the exporter's memory from the importer's side: the only stages whose failure can
     * say that two IMEX domains are apart. A failure before them (the exporter's create or export, the handle's
     * trip) or in reserving the importer's own address range says nothing about the domains.
     */
    public boolean reachesTheExport() {
        return this == IMPORT || this == MAP || this == ACCESS || this == VERIFY || this == WRITEBACK;
    }

    /** What the stage does, in a sentence (for debug=true and the docs). */
    public String purpose() {
        return purpose;
    }

    /** Kept, not made per call: every document and metric series carries it (docs/performance.md, 2026-12-05). */
    private final String label = name().toLowerCase(Locale.ROOT);

    @JsonValue
    public String label() {
        return label;
    }

    public static Stage parse(String label) {
        for (Stage s : values()) {
            if (s.label().equalsIgnoreCase(label)) {
                return s;
            }
        }
        return null;
    }
}
