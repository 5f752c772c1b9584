package dev.imexprobe.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads /proc/driver/nvidia/{params,version,gpus/*}/information into {@link DriverParams}. Never throws for I/O. */
final class DriverParamsReader {

    private static final Pattern VERSION_NUMBER = Pattern.compile("\\b(\\d+\\.\\d+(?:\\.\\d+)?)\\b");

    private final Path nvidiaDir;

    DriverParamsReader(Path procRoot) {
        this.nvidiaDir = procRoot.resolve("driver/nvidia");
    }

    DriverParams read() {
        List<String> errors = new ArrayList<>();

        Path paramsFile = nvidiaDir.resolve("params");
        String params = readOrNull(paramsFile, errors, "the nvidia kernel module is not loaded, or /proc is "
                + "not the host's; load nvidia.ko (nvidia-smi does) and mount the host's /proc/driver/nvidia");
        Integer channelCount = null;
        Integer createChannel0 = null;
        if (params != null) {
            Map<String, String> values = colonSeparated(params);
            channelCount = intParam(values, "ImexChannelCount", paramsFile, errors);
            createChannel0 = intParam(values, "CreateImexChannel0", paramsFile, errors);
        }

        Path versionFile = nvidiaDir.resolve("version");
        String versionText = readOrNull(versionFile, errors, null);
        String version = null;
        String driverVersion = null;
        if (versionText != null) {
            version = versionText.lines().findFirst().map(String::strip).orElse("");
            Matcher m = VERSION_NUMBER.matcher(version);
            driverVersion = m.find() ? m.group(1) : null;
        }

        List<DriverParams.GpuInformation> gpus = readGpus(errors);
        return new DriverParams(params != null, channelCount, createChannel0, versionText != null, version,
                driverVersion, gpus, errors.isEmpty() ? null : String.join("; ", errors));
    }

    private List<DriverParams.GpuInformation> readGpus(List<String> errors) {
        Path gpusDir = nvidiaDir.resolve("gpus");
        if (!Files.isDirectory(gpusDir)) {
            return List.of(); // no module, or no GPU bound to it: said by the other fields
        }
        List<Path> dirs = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(gpusDir)) {
            entries.forEach(dirs::add);
        } catch (IOException | DirectoryIteratorException | SecurityException e) {
            errors.add("cannot list " + gpusDir + ": " + DeviceFile.describe(e));
            return List.of();
        }
        dirs.sort(null);
        List<DriverParams.GpuInformation> gpus = new ArrayList<>();
        for (Path dir : dirs) {
            String busId = dir.getFileName().toString();
            Path information = dir.resolve("information");
            try {
                Map<String, String> values = colonSeparated(Files.readString(information, StandardCharsets.UTF_8));
                Integer minor = parseIntOrNull(values.get("Device Minor"));
                gpus.add(new DriverParams.GpuInformation(busId, values.get("Model"), values.get("GPU UUID"), minor,
                        null));
            } catch (IOException | SecurityException e) {
                gpus.add(new DriverParams.GpuInformation(busId, null, null, null,
                        "cannot read " + information + ": " + DeviceFile.describe(e)));
            }
        }
        return gpus;
    }

    private static String readOrNull(Path file, List<String> errors, String missingHint) {
        try {
            // Malformed bytes become U+FFFD instead of failing the read: a garbled file is reported, not fatal.
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            if (missingHint != null) {
                errors.add(file + " does not exist: " + missingHint);
            }
        } catch (IOException | SecurityException e) {
            errors.add("cannot read " + file + ": " + DeviceFile.describe(e));
        }
        return null;
    }

    /** "Key: value" lines, the format of params and information; the first occurrence of a key wins. */
    static Map<String, String> colonSeparated(String text) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                values.putIfAbsent(line.substring(0, colon).strip(), line.substring(colon + 1).strip());
            }
        }
        return values;
    }

    private static Integer intParam(Map<String, String> values, String key, Path file, List<String> errors) {
        String raw = values.get(key);
        if (raw == null) {
            errors.add(file + " has no " + key + ": the loaded nvidia module may predate IMEX channels; "
                    + "compare driverVersion with the CUDA driver's and update the module");
            return null;
        }
        Integer value = parseIntOrNull(raw);
        if (value == null) {
            String shown = raw.length() > 60 ? raw.substring(0, 60) + "…" : raw;
            errors.add(file + " has " + key + " = '" + shown + "', not an integer: the file is garbled or not "
                    + "the module's");
        }
        return value;
    }

    private static Integer parseIntOrNull(String raw) {
        if (raw == null) {
            return null;
        }
        try {
            return Integer.parseInt(raw.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
