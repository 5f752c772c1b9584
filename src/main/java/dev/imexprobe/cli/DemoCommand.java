package dev.imexprobe.cli;

import dev.imexprobe.args.CommandLine;
import dev.imexprobe.cli.DemoDomain.DemoAgent;
import dev.imexprobe.cuda.NativeLibrary;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code demo}: a simulated cluster on the fake driver, real agent processes probing each other. NVLink domain 1 is
 * N nodes × M GPUs, one agent per GPU (the per-GPU topology of the seed), with trouble built in so the diagnosis has
 * something to find: on the first node the seed's containers (each given only its own GPU's device node, so
 * same-node imports between them fail with 801, as measured on two H200s), and on the last node one agent without
 * its IMEX channel (800). {@code --domains} NVLink domains in all (default 2: the others N nodes each, one agent per
 * node) plus one HGX-style node without an NVLink fabric (its own IMEX domain): pairs across domains are shown as
 * not probed, never as failures. Everything it shows is labelled simulated. Ctrl-C or --duration stops every agent and removes every file it made.
 */
final class DemoCommand {

    /**
     * @param nodes   nodes per NVLink domain
     * @param domains NVLink domains (cliques of one cluster); one HGX-style node-local node comes on top
     * @param port    the first agent's port; 0 = the first free block from 18080
     */
    record Options(int nodes, int gpusPerNode, int domains, int port, Duration duration, Duration interval) {
    }

    private DemoCommand() {
    }

    static int run(String[] args, PrintStream out) {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("demo: " + e.getMessage());
            Main.usage(System.err);
            return Main.USAGE;
        }
        int agentCount = DemoDomain.agentCount(o);
        int base = o.port() > 0 ? o.port() : DemoDomain.freeBlock(18080, agentCount);
        if (base < 0 || !DemoDomain.free(base, agentCount)) {
            System.err.println("demo: ports " + (o.port() > 0 ? o.port() : 18080) + "… are taken; pass --port with "
                    + agentCount + " free ports in a row");
            return 1;
        }
        o = new Options(o.nodes(), o.gpusPerNode(), o.domains(), base, o.duration(), o.interval());
        Path root;
        try {
            root = Files.createTempDirectory("imexprobe-demo-");
        } catch (IOException e) {
            System.err.println("demo: cannot create a temporary folder: " + e.getMessage());
            return 1;
        }
        List<Process> processes = new ArrayList<>();
        Thread cleanup = new Thread(() -> DemoProcesses.stop(processes, root), "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            List<DemoAgent> agents = DemoDomain.plan(o, root, NativeLibrary.fakeDriverDirectory());
            for (DemoAgent a : agents) {
                processes.add(DemoProcesses.start(a, root));
            }
            DemoAgent first = agents.getFirst();
            out.printf("SIMULATED cluster: %d NVLink domains of %d nodes × %d GPUs and one HGX-style node (%s, no NVLink "
                    + "fabric: its own IMEX domain), %d agents on the fake driver (nothing here runs on a GPU)%n",
                    o.domains(), o.nodes(), o.gpusPerNode(), DemoDomain.HGX_NODE, agents.size());
            out.println("pairs across IMEX domains cannot import by design: not probed (grey), never failed");
            out.printf("built-in trouble: %s runs the seed's containers (each has only its own GPU's device node: same-node "
                    + "imports → 801); %s has no IMEX channel (→ 800)%n",
                    agents.getFirst().node(), DemoDomain.troubleAgent(agents).name());
            // JVMs starting side by side share the machine's cores: the limit grows with their number.
            DemoProcesses.waitReady(agents, processes, Duration.ofSeconds(60 + 15L * agents.size()));
            out.printf("matrix page:  http://localhost:%d/%n", first.port());
            out.printf("metrics:      http://localhost:%d/actuator/prometheus%n", first.port());
            out.printf("mesh (JSON):  http://localhost:%d/v1/mesh?scope=domain%n", first.port());
            out.println(o.duration() == null ? "press Ctrl-C to stop" : "running for " + o.duration().toSeconds() + " s");
            out.flush();
            DemoWatch.watch(first, processes, o, out);
        } catch (IOException e) {
            System.err.println("demo: " + e.getMessage());
            DemoProcesses.printLogs(root);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            DemoProcesses.stop(processes, root);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException e) {
                // already shutting down: the hook runs anyway, and stop() is idempotent
            }
        }
        out.println("stopped every agent and removed " + root);
        return 0;
    }

    static Options parse(String[] args) {
        CommandLine c = CommandLine.parse(args, Set.of(), Set.of("--nodes", "--gpus-per-node", "--domains", "--port",
                "--duration", "--interval"));
        int nodes = or(c.number("--nodes", 1, 16), 2);
        int gpus = or(c.number("--gpus-per-node", 1, 8), 2);
        int domains = or(c.number("--domains", 1, 8), 2);
        int port = or(c.number("--port", 1024, 64000), 0);
        Duration duration = c.duration("--duration");
        Duration interval = c.has("--interval") ? c.duration("--interval") : Duration.ofSeconds(2);
        if (nodes * gpus < 2) {
            throw new IllegalArgumentException("a domain needs at least two agents (--nodes × --gpus-per-node ≥ 2)");
        }
        Options o = new Options(nodes, gpus, domains, port, duration, interval);
        if (DemoDomain.agentCount(o) > 64) {
            throw new IllegalArgumentException("that is " + DemoDomain.agentCount(o) + " agent processes; the demo "
                    + "starts at most 64 (fewer --nodes, --gpus-per-node or --domains)");
        }
        return o;
    }

    private static int or(Long given, int otherwise) {
        return given == null ? otherwise : given.intValue();
    }
}
