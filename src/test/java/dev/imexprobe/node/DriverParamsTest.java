package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DriverParamsTest {

    @TempDir
    Path root;

    private DriverParams read() {
        return new NodeInspector(Fixtures.settings(root)).driverParams();
    }

    private static String params(String imexChannelCount, String createImexChannel0) {
        // The real file has ~50 such lines; the two we read sit between others.
        return "ResmanDebugLevel: 4294967295\nRmLogonRC: 1\nModifyDeviceFiles: 1\n"
                + (imexChannelCount == null ? "" : "ImexChannelCount: " + imexChannelCount + "\n")
                + "DeviceFileUID: 0\n"
                + (createImexChannel0 == null ? "" : "CreateImexChannel0: " + createImexChannel0 + "\n")
                + "RegistryDwords: \"\"\nGrdmaPciTopoCheckOverride: 0\n";
    }

    private static String information(String model, String uuid, String bus, int minor) {
        return "Model: \t\t " + model + "\nIRQ:   \t\t 0\nGPU UUID: \t " + uuid + "\nVideo BIOS: \t ??.??.??.??.??\n"
                + "Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t " + bus
                + "\nDevice Minor: \t " + minor + "\nGPU Excluded:\t No\n";
    }

    @Test
    void readsParamsVersionAndGpus() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int count = 1 + random.nextInt(4096);
        int create = random.nextInt(2);
        Path nvidia = root.resolve("proc/driver/nvidia");
        Fixtures.write(nvidia.resolve("params"), params(Integer.toString(count), Integer.toString(create)));
        Fixtures.write(nvidia.resolve("version"), "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                + "580.159.04  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Wed Jul 23 23:31:27 UTC 2025\n"
                + "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
        Fixtures.write(nvidia.resolve("gpus/0000:9a:00.0/information"),
                information("NVIDIA H200", "GPU-aaaaaaaa-1111-2222-3333-444444444444", "0000:9a:00.0", 7));
        Fixtures.write(nvidia.resolve("gpus/0000:19:00.0/information"),
                information("NVIDIA H200", "GPU-bbbbbbbb-1111-2222-3333-444444444444", "0000:19:00.0", 0));

        DriverParams params = read();

        assertThat(params.paramsPresent()).isTrue();
        assertThat(params.imexChannelCount()).as("seed %d", seed).isEqualTo(count);
        assertThat(params.createImexChannel0()).as("seed %d", seed).isEqualTo(create);
        assertThat(params.versionPresent()).isTrue();
        assertThat(params.version()).startsWith("NVRM version: NVIDIA UNIX Open Kernel Module").doesNotContain("GCC");
        assertThat(params.driverVersion()).isEqualTo("580.159.04");
        assertThat(params.gpus()).extracting(DriverParams.GpuInformation::busId)
                .containsExactly("0000:19:00.0", "0000:9a:00.0");
        assertThat(params.gpus().getFirst()).isEqualTo(new DriverParams.GpuInformation("0000:19:00.0",
                "NVIDIA H200", "GPU-bbbbbbbb-1111-2222-3333-444444444444", 0, null));
        assertThat(params.gpus().get(1).deviceMinor()).isEqualTo(7);
        assertThat(params.error()).isNull();
    }

    @Test
    void theMeasuredH200ValuesParse() throws Exception {
        Fixtures.write(root.resolve("proc/driver/nvidia/params"), params("2048", "0"));
        DriverParams params = read();
        assertThat(params.imexChannelCount()).isEqualTo(2048);
        assertThat(params.createImexChannel0()).isZero();
        assertThat(params.versionPresent()).isFalse();
        assertThat(params.version()).isNull();
        assertThat(params.gpus()).isEmpty();
        assertThat(params.error()).isNull();
    }

    @Test
    void missingModuleIsSaidWithTheNextStep() {
        DriverParams params = read();
        assertThat(params.paramsPresent()).isFalse();
        assertThat(params.imexChannelCount()).isNull();
        assertThat(params.versionPresent()).isFalse();
        assertThat(params.error()).contains("proc/driver/nvidia/params does not exist")
                .contains("nvidia kernel module is not loaded");
    }

    @Test
    void garbledValuesAreNullWithTheReason() throws Exception {
        Fixtures.write(root.resolve("proc/driver/nvidia/params"), params("lots", "0"));
        DriverParams params = read();
        assertThat(params.paramsPresent()).isTrue();
        assertThat(params.imexChannelCount()).isNull();
        assertThat(params.createImexChannel0()).isZero();
        assertThat(params.error()).contains("ImexChannelCount = 'lots', not an integer");
    }

    @Test
    void binaryGarbageMeansTheKeysAreMissing() throws Exception {
        long seed = System.nanoTime();
        byte[] junk = new byte[4096];
        new Random(seed).nextBytes(junk);
        Path file = root.resolve("proc/driver/nvidia/params");
        Files.createDirectories(file.getParent());
        Files.write(file, junk);

        DriverParams params = read();

        assertThat(params.paramsPresent()).isTrue();
        assertThat(params.imexChannelCount()).as("seed %d", seed).isNull();
        assertThat(params.createImexChannel0()).as("seed %d", seed).isNull();
        assertThat(params.error()).as("seed %d", seed).contains("has no ImexChannelCount")
                .contains("has no CreateImexChannel0").contains("may predate IMEX channels");
    }

    @Test
    void aModuleWithoutImexKeysIsSaid() throws Exception {
        Fixtures.write(root.resolve("proc/driver/nvidia/params"), params(null, null));
        DriverParams params = read();
        assertThat(params.imexChannelCount()).isNull();
        assertThat(params.error()).contains("has no ImexChannelCount");
    }

    @Test
    void aGpuDirectoryWithoutInformationKeepsTheOthers() throws Exception {
        Path gpus = root.resolve("proc/driver/nvidia/gpus");
        Files.createDirectories(gpus.resolve("0000:01:00.0"));
        Fixtures.write(gpus.resolve("0000:02:00.0/information"),
                information("NVIDIA H200", "GPU-cccccccc-1111-2222-3333-444444444444", "0000:02:00.0", 1));

        DriverParams params = read();

        assertThat(params.gpus()).hasSize(2);
        assertThat(params.gpus().get(0).busId()).isEqualTo("0000:01:00.0");
        // Our words and the file; the operating system's reason after the colon is not ours to pin.
        assertThat(params.gpus().get(0).error())
                .startsWith("cannot read " + gpus.resolve("0000:01:00.0/information") + ": ");
        assertThat(params.gpus().get(1).uuid()).isEqualTo("GPU-cccccccc-1111-2222-3333-444444444444");
        assertThat(params.gpus().get(1).error()).isNull();
    }
}
