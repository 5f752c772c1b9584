package dev.imexprobe.node;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;

/** Stats and test-opens the nvidia device nodes under a /dev root. Never throws for I/O trouble. */
final class DeviceNodeReader {

    /** Always reported, present or not: without them no CUDA context (ctl, uvm) or channel (caps dir) works. */
    static final List<String> FIXED = List.of("nvidiactl", "nvidia-uvm", ProcDevices.IMEX_CHANNELS);
    private static final Pattern GPU_NODE = Pattern.compile("nvidia(0|[1-9][0-9]{0,8})");

    private final Path devRoot;

    DeviceNodeReader(Path devRoot) {
        this.devRoot = devRoot;
    }

    DeviceNodes read() {
        TreeSet<String> names = new TreeSet<>(NaturalOrder.INSTANCE);
        names.addAll(FIXED);
        String error = null;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(devRoot)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (GPU_NODE.matcher(name).matches()) {
                    names.add(name);
                }
            }
        } catch (NoSuchFileException e) {
            error = devRoot + " does not exist: mount devtmpfs (or the container's /dev) there";
        } catch (IOException | DirectoryIteratorException | SecurityException e) {
            error = "cannot list " + devRoot + ": " + DeviceFile.describe(e) + "; nvidiaN nodes are not listed";
        }
        List<DeviceNode> nodes = new ArrayList<>();
        for (String name : names) {
            nodes.add(node(devRoot.resolve(name), name));
        }
        return new DeviceNodes(devRoot.toString(), nodes, error);
    }

    private static DeviceNode node(Path path, String name) {
        DeviceFile file = DeviceFile.stat(path);
        boolean directory = file.type() == DeviceFile.Type.DIRECTORY;
        String openError = directory ? listError(path) : file.openForReadError();
        return new DeviceNode(name, path.toString(), file.exists(), file.charDevice(), directory, file.major(),
                file.minor(), openError == null, openError);
    }

    private static String listError(Path dir) {
        try (DirectoryStream<Path> ignored = Files.newDirectoryStream(dir)) {
            return null;
        } catch (IOException | SecurityException e) {
            return DeviceFile.describe(e);
        }
    }
}
