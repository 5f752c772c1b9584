package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class StageStitchTest {

    private final Random random = new Random();

    private StageResult ok(Stage s, String detail) {
        return StageResult.of(s, StageOutcome.ok(CuResult.SUCCESS, detail), 1_000_000L + random.nextInt(5_000_000));
    }

    @Test
    void everyStageInOrderAndTheGapNamesWhatDidNotRun() {
        StageStitch st = new StageStitch();
        st.add(ok(Stage.EXPORT, "exported"));
        st.add(ok(Stage.CREATE, "created"));
        st.add(null);
        st.addAllExcept(List.of(ok(Stage.IMPORT, "imported"), ok(Stage.RELEASE, "remote release")), Stage.RELEASE);
        List<StageResult> list = st.list("not run: the map failed");
        assertThat(list).extracting(StageResult::name).containsExactly(Stage.values());
        assertThat(list.get(Stage.CREATE.ordinal()).detail()).isEqualTo("created");
        assertThat(list.get(Stage.IMPORT.ordinal()).detail()).isEqualTo("imported");
        assertThat(list.get(Stage.RELEASE.ordinal()).status()).isEqualTo(StageStatus.SKIPPED);
        assertThat(list.get(Stage.VERIFY.ordinal()).detail()).isEqualTo("not run: the map failed");
    }

    @Test
    void releasesOfBothSidesAddUpAndTheFirstFailureIsShown() {
        StageResult importer = ok(Stage.RELEASE, "released 2 driver resources");
        StageResult exporter = ok(Stage.RELEASE, "released 2 driver resources");
        StageResult both = StageStitch.mergeRelease(importer, exporter);
        assertThat(both.status()).isEqualTo(StageStatus.OK);
        assertThat(both.durationSeconds()).isEqualTo(importer.durationSeconds() + exporter.durationSeconds());
        assertThat(both.detail()).startsWith("importer: released").contains("; exporter: released");

        StageResult failed = StageResult.of(Stage.RELEASE, StageOutcome.failed(CuResult.of(1), "cuMemRelease failed"),
                10);
        assertThat(StageStitch.mergeRelease(importer, failed).status()).isEqualTo(StageStatus.FAILED);
        assertThat(StageStitch.mergeRelease(importer, failed).cuResult()).isEqualTo(1);
        StageResult timeout = StageResult.of(Stage.RELEASE, StageOutcome.timeout("no answer"), 10);
        assertThat(StageStitch.mergeRelease(timeout, failed).status()).as("the importer's first")
                .isEqualTo(StageStatus.TIMEOUT);
        assertThat(StageStitch.mergeRelease(null, exporter)).isSameAs(exporter);
        assertThat(StageStitch.mergeRelease(importer, null)).isSameAs(importer);
        assertThat(StageStitch.mergeRelease(null, null)).isNull();
    }

    @Test
    void theWriteBackIsTheImportersWriteAndTheExportersCheck() {
        StageResult write = ok(Stage.WRITEBACK, "wrote the write-back pattern");
        StageResult check = StageResult.of(Stage.WRITEBACK, StageOutcome.failed(CuResult.SUCCESS,
                "pattern differs at word 7"), 3_000_000);
        StageResult merged = StageStitch.mergeWriteback(write, check);
        assertThat(merged.status()).isEqualTo(StageStatus.FAILED);
        assertThat(merged.detail()).isEqualTo("importer wrote; exporter: pattern differs at word 7");
        assertThat(merged.durationSeconds()).isEqualTo(write.durationSeconds() + check.durationSeconds());
        StageResult notWritten = StageResult.of(Stage.WRITEBACK, StageOutcome.failed(CuResult.of(700), "copy"), 5);
        assertThat(StageStitch.mergeWriteback(notWritten, check)).isSameAs(notWritten);
        assertThat(StageStitch.mergeWriteback(write, null)).isSameAs(write);
        assertThat(StageStitch.mergeWriteback(null, check)).isNull();
    }
}
