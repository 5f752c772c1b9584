package dev.imexprobe.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Where the build put the shim, the fake driver and the jar (Surefire and Failsafe pass the paths). */
public final class NativeBuild {

    private NativeBuild() {
    }

    public static Path nativeDir() {
        String dir = System.getenv("IMEXPROBE_TEST_NATIVE");
        Path p = dir != null ? Path.of(dir) : Path.of("target", "native");
        if (!Files.isDirectory(p)) {
            throw new IllegalStateException("no native build at " + p.toAbsolutePath() + ": run ./mvnw process-classes");
        }
        return p.toAbsolutePath();
    }

    public static Path fakeDir() {
        return nativeDir().resolve("fake");
    }

    public static Path jar() {
        String jar = System.getenv("IMEXPROBE_TEST_JAR");
        Path p = jar != null ? Path.of(jar) : Path.of("target", "imexprobe.jar");
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException("no jar at " + p.toAbsolutePath() + ": run ./mvnw package first");
        }
        return p.toAbsolutePath();
    }

    /** The image's start layout made from {@link #jar()}: the extracted jar and an AOT cache for given JVM flags. */
    public record ImageLayout(Path jar, Path cache) {
    }

    private static final Map<List<String>, Optional<ImageLayout>> LAYOUTS = new HashMap<>();

    /**
     * The jar laid out as the image lays it out (src/main/docker/aot-cache.sh, the Dockerfile's own step), with
     * an AOT cache trained for {@code jvmFlags}, made once per jar under target/ (a stamp of the jar and the JDK says
     * whether a layout left there still fits; a file lock keeps two test JVMs from training over one another's
     * running agents): agents started from it are ready in about half the time, which is most of an
     * integration test's wall time on a small machine.
     * Empty when IMEXPROBE_TEST_AOT=off or when the training failed (then agents start from the fat jar, and
     * AotCacheIT, which runs the same script, says what broke).
     */
    public static synchronized Optional<ImageLayout> imageLayout(List<String> jvmFlags) {
        if ("off".equals(System.getenv("IMEXPROBE_TEST_AOT"))) {
            return Optional.empty();
        }
        return LAYOUTS.computeIfAbsent(List.copyOf(jvmFlags), NativeBuild::train);
    }

    private static Optional<ImageLayout> train(List<String> jvmFlags) {
        Path jar = jar();
        Path dir = jar.getParent().resolve("it-aot-" + Integer.toHexString(jvmFlags.hashCode()));
        Path lock = jar.getParent().resolve(dir.getFileName() + ".lock");
        try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock ignored = channel.lock()) {
            ImageLayout layout = new ImageLayout(dir.resolve("imexprobe.jar"), dir.resolve("imexprobe.aot"));
            Path stampFile = dir.resolve("trained-from");
            String stamp = jar + " " + Files.size(jar) + " " + Files.getLastModifiedTime(jar).toMillis() + " "
                    + java() + " " + Runtime.version();
            if (Files.isRegularFile(layout.cache()) && Files.isRegularFile(stampFile)
                    && Files.readString(stampFile).equals(stamp)) {
                return Optional.of(layout);
            }
            Files.deleteIfExists(stampFile);
            Optional<ImageLayout> trained = train(jar, dir, jvmFlags);
            if (trained.isPresent()) {
                Files.writeString(stampFile, stamp);
            }
            return trained;
        } catch (IOException e) {
            System.err.println("test agents start from the fat jar: " + e);
            return Optional.empty();
        }
    }

    private static Optional<ImageLayout> train(Path jar, Path dir, List<String> jvmFlags) {
        Path script = Path.of("src/main/docker/aot-cache.sh").toAbsolutePath();
        List<String> cmd = new ArrayList<>(List.of("sh", script.toString(), jar.toString(), dir.toString()));
        cmd.addAll(jvmFlags);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("IMEXPROBE_") || k.startsWith("FAKECUDA_")
                || k.startsWith("SERVER_") || k.startsWith("MANAGEMENT_") || k.startsWith("SPRING_")
                || k.equals("JAVA_TOOL_OPTIONS"));
        pb.environment().put("JAVA", java());
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                System.err.println("test agents start from the fat jar: aot-cache.sh failed:\n"
                        + new String(out, StandardCharsets.UTF_8));
                return Optional.empty();
            }
        } catch (IOException e) {
            System.err.println("test agents start from the fat jar: " + e);
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
        return Optional.of(new ImageLayout(dir.resolve("imexprobe.jar"), dir.resolve("imexprobe.aot")));
    }

    /** The java of this JVM (JDK 25), never a bare `java` from the PATH. */
    public static String java() {
        return ProcessHandle.current().info().command().orElseThrow();
    }
}
