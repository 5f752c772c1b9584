package dev.imexprobe.bench;

import dev.imexprobe.cuda.Allocation;
import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.FabricHandle;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.Mapping;
import dev.imexprobe.ladder.WorkerReply;
import dev.imexprobe.ladder.WorkerRequest;

import tools.jackson.databind.json.JsonMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Copy bandwidth through an imported mapping, measured in one run: a {@code worker} process exports a FABRIC
 * allocation on the exporter's GPU (another process, as between agents); this process imports and maps it on the
 * importer's GPU, makes two local allocations there, and times copies on the importer's GPU with the shim's
 * memcpyDtoDTimed (events on a private stream): imported → local (reading through the mapping), local → imported
 * (writing through it) and local → local. The reference is local → local on one GPU. Across two GPUs it is a peer
 * copy made without any handle: this process also allocates on the exporter's GPU and grants the importer's GPU
 * access (two contexts in one process), so the ratio says what the fabric handle costs over plain peer access
 * on the same link. Median of several repetitions; GB/s = 10^9 bytes/s.
 */
final class CopyBandwidth {

    private final CudaDriver driver;
    private final JsonMapper json;
    private final int exporterGpu;
    private final int importerGpu;

    CopyBandwidth(CudaDriver driver, JsonMapper json, int exporterGpu, int importerGpu) {
        this.driver = driver;
        this.json = json;
        this.exporterGpu = exporterGpu;
        this.importerGpu = importerGpu;
    }

    private boolean twoGpus() {
        return exporterGpu != importerGpu;
    }

    Map<String, Object> run(Bench.Settings s, List<Long> sizes, int iterations, int repetitions) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("exporterGpu", exporterGpu);
        m.put("importerGpu", importerGpu);
        m.put("reference", twoGpus() ? "peer copy: an allocation of this process on GPU " + exporterGpu
                + " mapped with access for GPU " + importerGpu : "local → local on GPU " + importerGpu);
        m.put("iterationsPerTiming", iterations);
        m.put("repetitions", repetitions);
        m.put("method", "CudaDriver.copyTimed (cuMemcpyDtoDAsync on a private stream, timed with events); "
                + "exporter = a worker process, importer = this process; copies run on the importer's GPU");
        List<Map<String, Object>> rows = new ArrayList<>();
        List<String> cmd = new ArrayList<>(List.of(s.java(), "-XX:TieredStopAtLevel=1", "-jar", s.jar().toString(), "worker"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(s.work().resolve("copy-worker.log").toFile());
        Process worker = AgentJvm.track(pb.start());
        try (PrintWriter in = new PrintWriter(worker.getOutputStream(), true, StandardCharsets.UTF_8);
             BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8))) {
            for (long size : sizes) {
                rows.add(one(in, out, size, iterations, repetitions));
            }
            ask(in, out, new WorkerRequest.Exit());
        } finally {
            if (!worker.waitFor(10, TimeUnit.SECONDS)) {
                worker.destroyForcibly();
            }
            AgentJvm.untrack(worker);
        }
        m.put("sizes", rows);
        return m;
    }

    private Map<String, Object> one(PrintWriter in, BufferedReader out, long size, int iterations, int repetitions)
            throws IOException {
        long seed = 0x5eed0000L + size;
        WorkerReply.StagesReply e = ask(in, out, new WorkerRequest.Export(exporterGpu, size, seed, HandleType.FABRIC));
        if (!e.ok()) {
            throw new IOException("the worker could not export " + size + " bytes: " + e);
        }
        FabricHandle handle = FabricHandle.fromBase64(e.handle());
        List<AutoCloseable> held = new ArrayList<>();
        try {
            Allocation imported = need(Allocation.importFabric(driver, importerGpu, handle, size), "import", held);
            Mapping importedMap = mapping(imported, importerGpu, size, held);
            CuCall<Long> check = importedMap.verify(seed);
            if (!check.ok() || check.value() >= 0) {
                throw new IOException("the imported mapping does not show the exporter's pattern: " + check.result()
                        + " at " + check.value());
            }
            Mapping a = mapping(need(Allocation.create(driver, importerGpu, size, Set.of()), "cuMemCreate", held),
                    importerGpu, size, held);
            Mapping b = mapping(need(Allocation.create(driver, importerGpu, size, Set.of()), "cuMemCreate", held),
                    importerGpu, size, held);
            // The peer reference: memory of the exporter's GPU that this process maps for the importer's GPU too.
            Mapping peer = twoGpus() ? mapping(need(Allocation.create(driver, exporterGpu, size, Set.of()),
                    "cuMemCreate", held), exporterGpu, size, held) : null;
            if (peer != null) {
                CuResult r = peer.setAccess(importerGpu);
                if (!r.ok()) {
                    throw new IOException("cuMemSetAccess for GPU " + importerGpu + " on memory of GPU " + exporterGpu
                            + " returned " + r.name() + ": these two GPUs have no peer access to compare with");
                }
            }
            // One untimed round each, so first-touch costs are not in the numbers.
            copy(a.ptr(), importedMap.ptr(), size, 1);
            copy(importedMap.ptr(), a.ptr(), size, 1);
            copy(b.ptr(), a.ptr(), size, 1);
            if (peer != null) {
                copy(a.ptr(), peer.ptr(), size, 1);
                copy(peer.ptr(), a.ptr(), size, 1);
            }
            double[] read = new double[repetitions];
            double[] write = new double[repetitions];
            double[] local = new double[repetitions];
            double[] peerRead = new double[repetitions];
            double[] peerWrite = new double[repetitions];
            for (int r = 0; r < repetitions; r++) {
                // Interleaved, so drift in clocks or load touches all alike.
                read[r] = gbps(size, iterations, copy(a.ptr(), importedMap.ptr(), size, iterations));
                write[r] = gbps(size, iterations, copy(importedMap.ptr(), a.ptr(), size, iterations));
                local[r] = gbps(size, iterations, copy(b.ptr(), a.ptr(), size, iterations));
                if (peer != null) {
                    peerRead[r] = gbps(size, iterations, copy(a.ptr(), peer.ptr(), size, iterations));
                    peerWrite[r] = gbps(size, iterations, copy(peer.ptr(), a.ptr(), size, iterations));
                }
            }
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("sizeBytes", size);
            double rd = Stats.median(read);
            double wr = Stats.median(write);
            double lo = Stats.median(local);
            row.put("importedToLocalGBps", Stats.round(rd));
            row.put("localToImportedGBps", Stats.round(wr));
            row.put("localToLocalGBps", Stats.round(lo));
            Map<String, Object> samples = new LinkedHashMap<>(Map.of("importedToLocal", round(read),
                    "localToImported", round(write), "localToLocal", round(local)));
            if (peer != null) {
                double prd = Stats.median(peerRead);
                double pwr = Stats.median(peerWrite);
                row.put("peerToLocalGBps", Stats.round(prd));
                row.put("localToPeerGBps", Stats.round(pwr));
                row.put("readRatio", Stats.round(rd / prd));
                row.put("writeRatio", Stats.round(wr / pwr));
                samples.put("peerToLocal", round(peerRead));
                samples.put("localToPeer", round(peerWrite));
            } else {
                row.put("readRatio", Stats.round(rd / lo));
                row.put("writeRatio", Stats.round(wr / lo));
            }
            row.put("samplesGBps", samples);
            return row;
        } finally {
            for (int i = held.size() - 1; i >= 0; i--) {
                try {
                    held.get(i).close();
                } catch (Exception ex) {
                    System.err.println("bench: release failed: " + ex);
                }
            }
            ask(in, out, new WorkerRequest.Release());
        }
    }

    /** Reserves and maps {@code alloc} in the context of {@code gpu}, with access for that GPU. */
    private Mapping mapping(Allocation alloc, int gpu, long size, List<AutoCloseable> held) throws IOException {
        Mapping m = need(Mapping.reserve(driver, gpu, size, 0), "cuMemAddressReserve", held);
        CuResult r = m.map(alloc);
        if (r.ok()) {
            r = m.setAccess(gpu);
        }
        if (!r.ok()) {
            throw new IOException("mapping " + size + " bytes failed: " + r.name());
        }
        return m;
    }

    private static <T extends AutoCloseable> T need(CuCall<T> c, String what, List<AutoCloseable> held) throws IOException {
        if (!c.ok()) {
            throw new IOException(what + " returned " + c.result().name());
        }
        held.add(c.value());
        return c.value();
    }

    private double copy(long dst, long src, long size, int iterations) throws IOException {
        CuCall<Float> t = driver.copyTimed(importerGpu, dst, src, size, iterations);
        if (!t.ok()) {
            throw new IOException("memcpyDtoDTimed returned " + t.result().name());
        }
        return t.value();
    }

    private static double gbps(long size, int iterations, double ms) {
        return size * (double) iterations / (ms / 1e3) / 1e9;
    }

    private static List<Double> round(double[] v) {
        List<Double> out = new ArrayList<>();
        for (double d : v) {
            out.add(Stats.round(d));
        }
        return out;
    }

    /** One request to the worker, in the ladder's records; its answer as the record it names. */
    private <R extends WorkerReply> R ask(PrintWriter in, BufferedReader out, WorkerRequest<R> request)
            throws IOException {
        in.println(json.writeValueAsString(request));
        String line = out.readLine();
        if (line == null) {
            throw new IOException("the worker exited; see its log");
        }
        return json.readValue(line, request.replyType());
    }

    static List<Long> parseSizes(String list) {
        List<Long> out = new ArrayList<>();
        for (String p : list.split(",")) {
            String t = p.trim().toUpperCase();
            long mult = t.endsWith("G") ? 1L << 30 : t.endsWith("M") ? 1L << 20 : 1;
            out.add(Long.parseLong(t.replaceAll("[GM]$", "")) * mult);
        }
        return out;
    }
}
