package dev.imexprobe.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Finds the JNI shim (and, for {@code demo}, the fake driver) inside the jar or on the class path and loads it.
 * The jar carries one build per architecture under {@code /native/linux-<arch>/}; a copy is written to
 * {@code java.io.tmpdir} under a name derived from its content, so several agents share one file and an
 * upgraded jar never loads a stale library.
 */
public final class NativeLibrary {

    static final String SHIM = "libimexprobe.so";
    public static final List<String> FAKE_LIBRARIES = List.of("libcuda.so.1", "libnvidia-ml.so.1");

    private static volatile boolean loaded;

    private NativeLibrary() {
    }

    /** linux-x86_64 or linux-aarch64: the folder of this machine's builds. */
    public static String platform() {
        String arch = System.getProperty("os.arch");
        return "linux-" + switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
    }

    static synchronized void load() {
        if (loaded) {
            return;
        }
        Path dir = materialize(platform(), List.of(SHIM));
        System.load(dir.resolve(SHIM).toAbsolutePath().toString());
        loaded = true;
    }

    /** The folder holding the fake libcuda.so.1 and libnvidia-ml.so.1 of this jar, written out if need be. */
    public static Path fakeDriverDirectory() {
        return materialize(platform() + "/fake", FAKE_LIBRARIES);
    }

    /**
     * Writes {@code content} to {@code target} unless the file there already has the same SHA-256: a file of the
     * right size but other bytes (a torn copy, an edit, another build) is replaced, never loaded.
     *
     * @return whether the file was written
     */
    static boolean place(Path target, byte[] content) throws IOException, NoSuchAlgorithmException {
        if (Files.isRegularFile(target) && Files.size(target) == content.length
                && MessageDigest.isEqual(sha256(Files.readAllBytes(target)), sha256(content))) {
            return false;
        }
        // Write beside, then rename: another agent may be loading the same file right now.
        Path tmp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".part");
        Files.write(tmp, content);
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException | FileAlreadyExistsException e) {
            Files.deleteIfExists(tmp);
        }
        return true;
    }

    private static byte[] sha256(byte[] bytes) throws NoSuchAlgorithmException {
        return MessageDigest.getInstance("SHA-256").digest(bytes);
    }

    /**
     * A folder holding the named resources of /native/&lt;folder&gt;/: the class path folder itself when the
     * resources are plain files (a build tree), else one copy per content under java.io.tmpdir.
     */
    private static Path materialize(String folder, List<String> names) {
        try {
            byte[][] contents = new byte[names.size()][];
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            Path plainFolder = null;
            for (int i = 0; i < names.size(); i++) {
                String resource = "/native/" + folder + "/" + names.get(i);
                URL url = NativeLibrary.class.getResource(resource);
                if (url == null) {
                    throw new UnsatisfiedLinkError("this build has no " + resource + " for " + platform()
                            + ": build on this architecture (./mvnw -B package) or use the image for it");
                }
                if ("file".equals(url.getProtocol())) {
                    plainFolder = Path.of(url.toURI()).getParent();
                    continue;
                }
                try (InputStream in = url.openStream()) {
                    contents[i] = in.readAllBytes();
                }
                digest.update(contents[i]);
            }
            if (plainFolder != null) {
                return plainFolder;
            }
            String id = HexFormat.of().formatHex(digest.digest(), 0, 8);
            Path dir = Path.of(System.getProperty("java.io.tmpdir"), "imexprobe-native-" + id);
            Files.createDirectories(dir);
            for (int i = 0; i < names.size(); i++) {
                place(dir.resolve(names.get(i)), contents[i]);
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the native library to " + System.getProperty("java.io.tmpdir")
                    + " (the chart mounts a writable /tmp; set -Djava.io.tmpdir to a writable folder)", e);
        } catch (NoSuchAlgorithmException | URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
