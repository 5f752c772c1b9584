package dev.imexprobe.node;

import java.util.List;

/**
 * The IMEX channel directory as this process sees it (a container sees only the channels mounted into it, and an
 * export binds to the exporter's lowest-numbered channel, which the importer must also hold).
 *
 * @param directory     the directory inspected
 * @param exists        it exists and is a directory
 * @param expectedMajor the {@code nvidia-caps-imex-channels} major from /proc/devices; null when the loaded module
 *                      does not register it (too old, or not loaded)
 * @param channels      every {@code channelN} entry, sorted by N
 * @param ignored       other entry names, sorted; the driver ignores them too
 * @param error         why the directory or /proc/devices could not be read, null when both were
 * @param opened        each channel was opened for reading to test it (readable = open succeeded); false in observer
 *                      mode, which lists and stat()s the channels and never opens one (readable = access(2) R_OK)
 */
public record ImexChannels(
        String directory,
        boolean exists,
        Integer expectedMajor,
        List<ImexChannel> channels,
        List<String> ignored,
        String error,
        boolean opened) {

    public ImexChannels(String directory, boolean exists, Integer expectedMajor, List<ImexChannel> channels,
                        List<String> ignored, String error) {
        this(directory, exists, expectedMajor, channels, ignored, error, true);
    }

    public ImexChannels {
        channels = channels == null ? List.of() : List.copyOf(channels);
        ignored = ignored == null ? List.of() : List.copyOf(ignored);
    }

    static ImexChannels failed(String directory, String error) {
        return new ImexChannels(directory, false, null, List.of(), List.of(), error);
    }
}
