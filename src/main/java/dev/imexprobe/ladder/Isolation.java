package dev.imexprobe.ladder;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What one worker process is given on a rung: environment (CUDA_VISIBLE_DEVICES, the fake's channel folder) and
 * entries hidden from it in a private mount namespace (device nodes, /proc/driver/nvidia/gpus entries, IMEX
 * channels), the way a container runtime builds a container. The namespace is made by {@code unshare} and the
 * tiny launcher script {@code isolate.sh}, which mounts the views and then execs the worker's java, so the
 * worker is the process the ladder talks to and every mount dies with it.
 *
 * @param env         variables set for the worker (CUDA_VISIBLE_DEVICES is otherwise removed: all GPUs visible)
 * @param hides       folders replaced by views without the named entries
 * @param params      files replaced by a copy with one "Key: value" line changed
 * @param description what was done, one phrase per step, for the report
 */
record Isolation(Map<String, String> env, List<Hide> hides, List<Param> params, List<String> description) {

    record Hide(Path dir, List<String> names) {
    }

    record Param(Path file, String key, String value) {
    }

    static final String SCRIPT = script();

    Isolation {
        env = Map.copyOf(env);
        hides = List.copyOf(hides);
        params = List.copyOf(params);
        description = List.copyOf(description);
    }

    /** Every GPU visible, nothing hidden (an empty description). */
    static Isolation allVisible() {
        return new Isolation(Map.of(), List.of(), List.of(), List.of());
    }

    Isolation withEnv(String name, String value, String what) {
        Map<String, String> e = new LinkedHashMap<>(env);
        e.put(name, value);
        return new Isolation(e, hides, params, plus(what));
    }

    Isolation hide(Path dir, List<String> names, String what) {
        List<Hide> h = new ArrayList<>(hides);
        h.add(new Hide(dir, List.copyOf(names)));
        return new Isolation(env, h, params, plus(what));
    }

    Isolation param(Path file, String key, String value, String what) {
        List<Param> p = new ArrayList<>(params);
        p.add(new Param(file, key, value));
        return new Isolation(env, hides, p, plus(what));
    }

    boolean needsNamespace() {
        return !hides.isEmpty() || !params.isEmpty();
    }

    /**
     * The command line that starts {@code worker} under this isolation.
     *
     * @param stage an empty folder the launcher mounts its views on (inside the namespace only)
     */
    List<String> command(List<String> worker, Path stage) {
        if (!needsNamespace()) {
            return worker;
        }
        List<String> cmd = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "--",
                "/bin/sh", "-c", SCRIPT, "imexprobe-isolate", stage.toString()));
        for (Hide h : hides) {
            cmd.add("hide");
            cmd.add(h.dir().toString());
            cmd.add(Integer.toString(h.names().size()));
            cmd.addAll(h.names());
        }
        for (Param p : params) {
            cmd.addAll(List.of("param", p.file().toString(), p.key(), p.value()));
        }
        cmd.add("--");
        cmd.addAll(worker);
        return cmd;
    }

    private List<String> plus(String what) {
        List<String> d = new ArrayList<>(description);
        d.add(what);
        return d;
    }

    /**
     * Null when this process may make mount namespaces with tmpfs views (CAP_SYS_ADMIN), else why not: tried
     * for real, the same way the launcher does it, because a capability check alone misses seccomp and LSMs.
     */
    static String namespaceUnavailableReason(Path scratch) {
        ProcessBuilder pb = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "--", "/bin/sh",
                "-c", "mount -t tmpfs imexprobe-ladder-check \"$1\"", "sh", scratch.toString());
        pb.redirectErrorStream(true);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readNBytes(2000);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "`unshare --mount` did not finish within 10 s";
            }
            if (p.exitValue() == 0) {
                return null;
            }
            return "needs CAP_SYS_ADMIN for a mount namespace (as a container runtime has): `unshare --mount` "
                    + "failed: " + new String(out, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "needs unshare(1) from util-linux to make a mount namespace: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while checking for mount namespaces";
        }
    }

    private static String script() {
        try (InputStream in = Isolation.class.getResourceAsStream("isolate.sh")) {
            if (in == null) {
                throw new IllegalStateException("isolate.sh is missing from the class path: a broken build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
