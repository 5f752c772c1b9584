package dev.imexprobe.bench;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * Runs bench/driver_floor.c inside this JVM (bench/floor_jni.c, built by {@code bench/build-floor.sh LIB.so}):
 * {@code java -cp imexprobe-bench.jar dev.imexprobe.bench.FloorInJvm LIB.so [driver_floor's arguments]}. The floor's
 * JSON goes where its {@code --out} says, as from the binary. Start it with the agents' JVM flags to put the floor's
 * calls in a process like theirs.
 */
public final class FloorInJvm {

    private FloorInJvm() {
    }

    private static native int run(String[] args);

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: FloorInJvm LIB.so [--iterations N] [--warmup W] [--size BYTES] [--gpu N] "
                    + "[--out FILE]");
            System.exit(64);
        }
        System.load(Path.of(args[0]).toAbsolutePath().toString());
        System.exit(run(Arrays.copyOfRange(args, 1, args.length)));
    }
}
