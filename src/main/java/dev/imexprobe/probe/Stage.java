package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/**
 * The stages of one fabric-memory exchange, in the order they run. This enum is the one place the sequence
 * is written down; every runner, document and metric takes its names from here.
 */
public enum Stage {
    /** cuMemCreate on the exporter, plus the exporter's own mapping to write the pattern. */
    CREATE,
    /** cuMemExportToShareableHandle. */
    EXPORT,
    /** The handle's trip to the importer (HTTP between agents; nothing in one process). */
    TRANSFER,
    /** cuMemImportFromShareableHandle on the importer. */
    IMPORT,
    /** cuMemAddressReserve on the importer. */
    RESERVE,
    /** cuMemMap of the imported handle. */
    MAP,
    /** cuMemSetAccess for the importer's GPU. */
    ACCESS,
    /** Read back through the imported mapping and compare with the exporter's pattern. */
    VERIFY,
    /** The importer writes a second pattern, the exporter checks it: proves write access across the fabric. */
    WRITEBACK,
    /** cuMemUnmap, cuMemAddressFree and cuMemRelease on both sides; the first failure is reported. */
    RELEASE;

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
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
