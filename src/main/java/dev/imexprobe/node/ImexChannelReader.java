package dev.imexprobe.node;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads an IMEX channel directory and /proc/devices into {@link ImexChannels}. Never throws for I/O trouble. With
 * {@code open} false (observer mode) it lists and stat()s the channels and never opens one: a process that opened a
 * channel would be one the driver could count as holding it.
 */
final class ImexChannelReader {

    // channelN with N in decimal without leading zeros, as the driver's tools name them. ImexChannelCount caps N
    // (2048 measured); nine digits keep any name parseable as an int.
    private static final Pattern CHANNEL = Pattern.compile("channel(0|[1-9][0-9]{0,8})");

    private final Path directory;
    private final Path procDevices;
    private final boolean open;

    ImexChannelReader(Path directory, Path procRoot, boolean open) {
        this.directory = directory;
        this.procDevices = procRoot.resolve("devices");
        this.open = open;
    }

    ImexChannels read() {
        List<String> errors = new ArrayList<>();
        Integer expectedMajor = readExpectedMajor(errors);

        DeviceFile dir = DeviceFile.stat(directory);
        if (!dir.exists()) {
            // Not an error of the inspection: no channel was ever created here (measured: none exists at boot).
            return new ImexChannels(directory.toString(), false, expectedMajor, List.of(), List.of(), joined(errors),
                    open);
        }
        if (dir.type() != DeviceFile.Type.DIRECTORY) {
            errors.add(directory + " is not a directory (" + dir.type().name().toLowerCase()
                    + "): remove it and recreate the channel directory");
            return new ImexChannels(directory.toString(), false, expectedMajor, List.of(), List.of(), joined(errors),
                    open);
        }

        List<ImexChannel> channels = new ArrayList<>();
        List<String> ignored = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                Matcher m = CHANNEL.matcher(name);
                if (m.matches()) {
                    channels.add(channel(entry, name, Integer.parseInt(m.group(1)), expectedMajor, open));
                } else {
                    ignored.add(name);
                }
            }
        } catch (IOException | DirectoryIteratorException | SecurityException e) {
            errors.add("cannot list " + directory + ": " + DeviceFile.describe(e)
                    + "; check the mount (a container sees only the channels mounted into it)");
        }
        channels.sort(Comparator.comparingInt(ImexChannel::number));
        ignored.sort(Comparator.naturalOrder());
        return new ImexChannels(directory.toString(), true, expectedMajor, channels, ignored, joined(errors), open);
    }

    private Integer readExpectedMajor(List<String> errors) {
        try {
            return ProcDevices.parse(Files.readString(procDevices)).characterMajor(ProcDevices.IMEX_CHANNELS);
        } catch (NoSuchFileException e) {
            errors.add(procDevices + " does not exist: is procfs mounted at " + procDevices.getParent() + "?");
        } catch (IOException | SecurityException e) {
            errors.add("cannot read " + procDevices + ": " + DeviceFile.describe(e));
        }
        return null;
    }

    private static ImexChannel channel(Path entry, String name, int number, Integer expectedMajor, boolean open) {
        DeviceFile file = DeviceFile.stat(entry);
        String readError = open ? file.openForReadError() : file.accessForReadError();
        boolean charDevice = file.charDevice();
        boolean majorMatches = charDevice && expectedMajor != null && expectedMajor.equals(file.major());
        boolean minorMatches = charDevice && file.minor() == number;
        return new ImexChannel(name, number, charDevice, file.major(), file.minor(), majorMatches, minorMatches,
                readError == null, readError);
    }

    private static String joined(List<String> errors) {
        return errors.isEmpty() ? null : String.join("; ", errors);
    }
}
