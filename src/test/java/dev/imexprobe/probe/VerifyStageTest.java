package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.Mapping;
import dev.imexprobe.cuda.PatternCheck;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The verify stage's two reads: the whole range by the compare kernel (or by copies where it does not load) and,
 * beside the kernel, one window by a copy engine, whose failure or mismatch fails the stage on its own.
 */
class VerifyStageTest {

    private static final long SIZE = 2L << 20;
    private static final long PTR = 1L << 40;

    private final Random random = new Random();
    private final List<long[]> calls = new ArrayList<>();

    /**
     * A driver whose check answers {@code rc} with the whole range's {@code mismatch} and the window's, loading its
     * kernels or not (then it reads no window, as the shim).
     */
    private CudaDriver driver(int patternKernel, CuResult rc, long mismatch, CuResult windowRc, long windowMismatch) {
        return (CudaDriver) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {CudaDriver.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "addressReserve" -> CuCall.ok(PTR);
                    case "addressFree", "unmap" -> CuResult.SUCCESS;
                    case "patternKernel" -> patternKernel;
                    case "verifyPattern" -> {
                        calls.add(new long[] {(int) args[0], (long) args[1], (long) args[2], (long) args[3],
                                (long) args[4], (long) args[5]});
                        boolean window = patternKernel == 0 && (long) args[5] > 0;
                        PatternCheck c = new PatternCheck(mismatch, window, window ? windowMismatch : -1,
                                window ? windowRc : CuResult.SUCCESS, window);
                        yield rc.ok() ? CuCall.ok(c) : CuCall.failed(rc);
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private CudaDriver driver(int patternKernel, long mismatch, long windowMismatch) {
        return driver(patternKernel, CuResult.SUCCESS, mismatch, CuResult.SUCCESS, windowMismatch);
    }

    private StageOutcome verify(CudaDriver driver, long seed) {
        ProbeSession s = new ProbeSession(driver, HandleType.FABRIC, SIZE, seed, null, 0, 0);
        Mapping m = Mapping.reserve(driver, 0, SIZE, 0).value();
        s.importerMapping = m;
        try {
            return new VerifyStage().run(s);
        } finally {
            m.release();
        }
    }

    @Test
    void whereTheKernelReadsItACopyEngineReadsTheSeedsWindowToo() {
        long seed = random.nextLong();
        StageOutcome o = verify(driver(0, -1, -1), seed);
        long offset = VerifyStage.copyWindowOffset(seed, SIZE, VerifyStage.COPY_WINDOW_BYTES);
        assertThat(o.status()).isEqualTo(StageStatus.OK);
        assertThat(o.detail()).isEqualTo("read back 2 MiB (compared on the GPU by the compare kernel), and 64 KiB at byte "
                + offset + " by a copy engine (cuMemcpyDtoHAsync, beside the kernel): pattern matches");
        assertThat(calls).hasSize(1);
        assertThat(calls.getFirst()).containsExactly(0, PTR, SIZE, seed, offset, 64 * 1024);
    }

    @Test
    void aMismatchOnlyTheCopySeesFailsTheStage() {
        long bad = 8L * random.nextInt((int) (SIZE / 8));
        StageOutcome o = verify(driver(0, -1, bad), random.nextLong());
        assertThat(o.status()).isEqualTo(StageStatus.FAILED);
        assertThat(o.cuResult()).isEqualTo(CuResult.SUCCESS);
        assertThat(o.detail()).contains("found a mismatch at byte " + bad + ": copies through the mapping do not show "
                + "the exporter's memory where the SMs' reads do");
    }

    @Test
    void aCopyTheDriverRefusesFailsTheStageWithItsResult() {
        StageOutcome o = verify(driver(0, CuResult.SUCCESS, -1, CuResult.of(700), -1), random.nextLong());
        assertThat(o.status()).isEqualTo(StageStatus.FAILED);
        assertThat(o.cuResult().name()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThat(o.detail()).endsWith("returned CUDA_ERROR_ILLEGAL_ADDRESS: copies through the mapping fail where the "
                + "SMs' reads succeed");
    }

    @Test
    void whereTheWholeRangeWasCopiedNoWindowIsNamed() {
        StageOutcome o = verify(driver(218, -1, 0), random.nextLong());
        assertThat(o.status()).isEqualTo(StageStatus.OK);
        assertThat(o.detail()).isEqualTo("read back 2 MiB (copied into host memory by cuMemcpyDtoH and compared there: "
                + "the driver could not load the compare kernel, CUDA_ERROR_INVALID_PTX): pattern matches");
    }

    @Test
    void aMismatchOfTheWholeRangeComesFirst() {
        StageOutcome o = verify(driver(0, 4096, 8192), random.nextLong());
        assertThat(o.status()).isEqualTo(StageStatus.FAILED);
        assertThat(o.detail()).isEqualTo("pattern mismatch at byte 4096 of 2 MiB: the mapping does not show the "
                + "exporter's memory");
    }

    @Test
    void aFailedCheckNamesItsResult() {
        StageOutcome o = verify(driver(0, CuResult.of(700), -1, CuResult.SUCCESS, -1), random.nextLong());
        assertThat(o.status()).isEqualTo(StageStatus.FAILED);
        assertThat(o.cuResult().name()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThat(o.detail()).isEqualTo("reading the imported memory (compared on the GPU by the compare kernel) returned "
                + "CUDA_ERROR_ILLEGAL_ADDRESS");
    }

    /** Random seeds and sizes: the window lies inside the range, on a window boundary, and probes reach every one. */
    @Test
    void theWindowsCoverTheRangeAcrossSeeds() {
        for (int i = 0; i < 1000; i++) {
            long size = (1 + random.nextInt(512)) * (2L << 20);
            long bytes = VerifyStage.COPY_WINDOW_BYTES;
            long offset = VerifyStage.copyWindowOffset(random.nextLong(), size, bytes);
            assertThat(offset).isBetween(0L, size - bytes);
            assertThat(offset % bytes).isZero();
        }
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 2000; i++) {
            seen.add(VerifyStage.copyWindowOffset(random.nextLong(), SIZE, VerifyStage.COPY_WINDOW_BYTES));
        }
        assertThat(seen).hasSize((int) (SIZE / VerifyStage.COPY_WINDOW_BYTES));
        assertThat(VerifyStage.copyWindowOffset(random.nextLong(), 4096, 4096)).isZero();
    }
}
