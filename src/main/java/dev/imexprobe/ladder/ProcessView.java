package dev.imexprobe.ladder;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.cuda.NvmlCall;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What one worker process sees once its isolation is in place: its GPUs, device nodes and IMEX channels. The
 * ladder compares it with what the rung meant to set up, so a rung whose isolation did not take is reported as
 * such instead of as a driver result. With the fake driver the device and channel folders are the fake's own
 * (fakecudaInfo), as the driver itself reads them.
 *
 * @param cudaVisibleDevices the process's CUDA_VISIBLE_DEVICES, null when unset
 * @param init               cuInit's result name
 * @param gpus               UUIDs of the GPUs the driver shows this process, by ordinal
 * @param nvmlGpus           UUIDs of the GPUs NVML reaches: past CUDA_VISIBLE_DEVICES, not past a hidden device
 *                           node; null when NVML could not say
 * @param devRoot            where GPU device nodes are looked for; null on the fake without FAKECUDA_DEV_DIR
 * @param deviceNodes        the {@code nvidiaN} entries there, sorted by N; null when devRoot is null
 * @param procGpus           /proc/driver/nvidia/gpus entries (real driver only), null when absent
 * @param channelDir         the IMEX channel directory the driver reads
 * @param channels           the {@code channelN} entries there this process can open for reading, sorted by N
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProcessView(String cudaVisibleDevices, String init, List<String> gpus, List<String> nvmlGpus,
                          String devRoot, List<String> deviceNodes, List<String> procGpus, String channelDir,
                          List<String> channels) {

    static final Path REAL_DEV = Path.of("/dev");
    static final Path REAL_CHANNELS = Path.of("/dev/nvidia-caps-imex-channels");
    static final Path PROC_GPUS = Path.of("/proc/driver/nvidia/gpus");
    private static final Pattern GPU_NODE = Pattern.compile("nvidia(0|[1-9][0-9]{0,8})");
    private static final Pattern CHANNEL = Pattern.compile("channel(0|[1-9][0-9]{0,8})");

    /** This process's view, through the driver it loaded. */
    public static ProcessView inspect(CudaDriver driver) {
        List<String> gpus = new ArrayList<>();
        String init = "NOT_LOADED";
        if (driver.status().cudaLoaded()) {
            CuResult r = driver.init();
            init = r.name();
            CuCall<Integer> count = r.ok() ? driver.deviceCount() : null;
            for (int i = 0; count != null && count.ok() && i < count.value(); i++) {
                CuCall<String> uuid = driver.deviceUuid(i);
                gpus.add(uuid.ok() ? uuid.value() : "?" + uuid.result().name());
            }
        }
        NvmlCall<List<String>> nvml = driver.nvmlGpuUuids();
        Map<String, String> fake = driver.status().fake();
        Path devRoot;
        Path channelDir;
        List<String> procGpus = null;
        if (fake != null) {
            String dev = fake.getOrDefault("devDir", "");
            devRoot = dev.isBlank() ? null : Path.of(dev);
            channelDir = Path.of(fake.getOrDefault("channelDir", REAL_CHANNELS.toString()));
        } else {
            devRoot = REAL_DEV;
            channelDir = REAL_CHANNELS;
            procGpus = Files.isDirectory(PROC_GPUS) ? entries(PROC_GPUS, null, false) : null;
        }
        return new ProcessView(System.getenv("CUDA_VISIBLE_DEVICES"), init, List.copyOf(gpus),
                nvml.ok() ? nvml.value() : null, devRoot == null ? null : devRoot.toString(),
                devRoot == null ? null : entries(devRoot, GPU_NODE, false),
                procGpus, channelDir.toString(), entries(channelDir, CHANNEL, true));
    }

    /**
     * Whether this process has the GPU with {@code uuid}: the same rule as an agent's ({@link GpuDevice#reached}), on
     * this process's CUDA, NVML and CUDA_VISIBLE_DEVICES; null when that cannot be told.
     */
    Boolean has(String uuid) {
        return GpuDevice.reached(gpus.contains(uuid), nvmlGpus, cudaVisibleDevices != null, uuid);
    }

    /** Entry names of dir matching pattern (all when null), by their number where they have one. */
    static List<String> entries(Path dir, Pattern pattern, boolean readableOnly) {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path p : s) {
                String name = p.getFileName().toString();
                if ((pattern == null || pattern.matcher(name).matches()) && (!readableOnly || Files.isReadable(p))) {
                    names.add(name);
                }
            }
        } catch (IOException | RuntimeException e) {
            // A missing or unreadable folder shows as empty: exactly what a process without it sees.
        }
        names.sort(Comparator.comparingLong(ProcessView::number).thenComparing(Comparator.naturalOrder()));
        return List.copyOf(names);
    }

    /** The trailing decimal number of nvidiaN / channelN, or -1. */
    static long number(String name) {
        int i = name.length();
        while (i > 0 && Character.isDigit(name.charAt(i - 1))) {
            i--;
        }
        return i == name.length() || name.length() - i > 9 ? -1 : Long.parseLong(name.substring(i));
    }
}
