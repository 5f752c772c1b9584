package dev.imexprobe.testing;

import java.nio.file.Files;
import java.nio.file.Path;

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

    /** The java of this JVM (JDK 25), never a bare `java` from the PATH. */
    public static String java() {
        return ProcessHandle.current().info().command().orElseThrow();
    }
}
