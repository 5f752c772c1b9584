package dev.imexprobe.probe;

import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.cuda.GpuDevice;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The domain name ImexDomain writes is the one its readers take apart. */
class ImexDomainTest {

    private static final String CLUSTER = "5a1c0e9d-1111-2222-3333-444455556666";

    @Test
    void aRegisteredGpusDomainNamesItsClusterAndClique() {
        String d = ImexDomain.of(new FabricInfo(3, FabricInfo.STATE_COMPLETED, 0, 0xffff_ffffL, CLUSTER, 0, 0), "boot");
        assertThat(d).isEqualTo("fabric:" + CLUSTER + "/4294967295");
        assertThat(ImexDomain.isFabric(d)).isTrue();
        assertThat(ImexDomain.cluster(d)).isEqualTo(CLUSTER);
        assertThat(ImexDomain.clique(d)).isEqualTo("4294967295");
    }

    @Test
    void aHostDomainOrNoneIsNotAFabric() {
        String host = ImexDomain.of(new FabricInfo(3, FabricInfo.STATE_NOT_SUPPORTED, 0, 0, null, 0, 0), "boot-1");
        assertThat(host).isEqualTo("host:boot-1");
        assertThat(ImexDomain.isFabric(host)).isFalse();
        assertThat(ImexDomain.isFabric(null)).isFalse();
    }

    @Test
    void aGpuUuidIsShortenedToItsFirstEightDigits() {
        assertThat(GpuDevice.shortUuid("GPU-3f2a9c11-aaaa-bbbb-cccc-000000000001")).isEqualTo("GPU-3f2a9c11");
        assertThat(GpuDevice.shortUuid("GPU-12")).isEqualTo("GPU-12");
        assertThat(GpuDevice.shortUuid("MIG-3f2a9c11-aaaa")).isEqualTo("MIG-3f2a9c11-aaaa");
    }
}
