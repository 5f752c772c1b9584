package dev.imexprobe.ladder;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.ladder.LadderReport.Cell;
import dev.imexprobe.ladder.LadderReport.RungResult;
import dev.imexprobe.ladder.LadderReport.Status;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Every row of the verdict table, from synthetic rung results: the pattern decides the code and its evidence. */
class LadderVerdictsTest {

    private static final LadderVerdicts.Context CONTEXT = new LadderVerdicts.Context(0, 1, "channel0", "channel1");

    /** A ladder described as one letter per rung and handle type: p pass, f fail, s skipped, e error. */
    private static List<RungResult> ladder(String fabric, String posix) {
        List<RungResult> rungs = new ArrayList<>();
        Rung[] all = Rung.values();
        for (int i = 0; i < all.length; i++) {
            rungs.add(new RungResult(all[i], all[i].title(), all[i].setup(), List.of(), List.of(), List.of(),
                    List.of(cell(HandleType.FABRIC, fabric.charAt(i), all[i]), cell(HandleType.POSIX_FD,
                            posix.charAt(i), all[i]))));
        }
        return rungs;
    }

    private static Cell cell(HandleType type, char status, Rung rung) {
        return switch (status) {
            case 'p' -> new Cell(type, Status.PASS, "pass", "passed", null, null, null, List.of());
            case 'f' -> {
                StageResult failed = new StageResult(Stage.IMPORT, StageStatus.FAILED, CuResult.INVALID_DEVICE.code(),
                        CuResult.INVALID_DEVICE.name(), 0.001, "cuMemImportFromShareableHandle(" + type + ") on GPU 0 "
                        + "returned CUDA_ERROR_INVALID_DEVICE");
                yield new Cell(type, Status.FAIL, "pass", "import failed: CUDA_ERROR_INVALID_DEVICE (101)", null,
                        failed, null, List.of(failed));
            }
            case 's' -> Cell.skipped(type, "needs a second GPU: the driver shows 1 GPU");
            case 'e' -> Cell.error(type, "the " + rung.label() + "-importer worker exited with code 97");
            default -> throw new IllegalArgumentException("status letter " + status);
        };
    }

    private static List<String> codes(List<Finding> findings) {
        return findings.stream().map(Finding::code).toList();
    }

    /** Rungs in order 0 1 2 3 4 5a 5b. */
    @ParameterizedTest(name = "FABRIC {0} POSIX_FD {1} -> {2}")
    @CsvSource({
            "fffffff, ppppppp, LADDER_FAILS_IN_ONE_PROCESS",
            "fffffff, fffffff, LADDER_FAILS_IN_ONE_PROCESS",
            "pffffff, ppppppp, LADDER_FABRIC_FAILS_ACROSS_PROCESSES",
            "pffffff, pffffff, LADDER_FAILS_ACROSS_PROCESSES",
            "ppfffpp, ppppppp, LADDER_FABRIC_FAILS_ACROSS_GPUS",
            "ppfffpp, ppfffpp, LADDER_FAILS_ACROSS_GPUS",
            "pppffpp, ppppppp, LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE",
            "pppffpp, pppffpp, LADDER_NEEDS_EXPORTER_GPU_VISIBLE",
            "pppffpp, ppfffpp, LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE",
            "pppffpp, pppsspp, LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE",
            "ppppfpp, ppppppp, LADDER_FABRIC_NEEDS_EXPORTER_DEVICE_NODE",
            "ppppfpp, ppppfpp, LADDER_NEEDS_EXPORTER_DEVICE_NODE",
            "ppppppp, ppppppp, LADDER_PASSED",
            "ppsssss, ppsssss, LADDER_INCOMPLETE",
            "ppppspp, ppppspp, LADDER_INCOMPLETE",
            "pppppfp, ppppppp, LADDER_SHARED_CHANNEL_FAILS",
            "ppppppf, ppppppp, LADDER_CHANNELS_NOT_ENFORCED",
            "ppppppp, pppfppp, LADDER_POSIX_FD_FAILS",
            "peppppp, peppppp, LADDER_NOT_RUN",
    })
    void theFirstFailingRungAndPosixFdBesideItPickTheVerdict(String fabric, String posix, String expected) {
        List<Finding> findings = LadderVerdicts.decide(ladder(fabric, posix), CONTEXT);
        assertThat(findings.getFirst().code()).isEqualTo(expected);
        for (Finding f : findings) {
            // Every placeholder of the catalogue text was filled from the evidence.
            assertThat(f.cause()).as(f.code()).doesNotContain("unknown").doesNotContain("{");
            assertThat(f.remedy()).as(f.code()).doesNotContain("{");
        }
    }

    @Test
    void theSeedPatternNamesRungThreeThe101AndThePassingPosixFd() {
        Finding v = LadderVerdicts.decide(ladder("pppffpp", "ppppppp"), CONTEXT).getFirst();
        assertThat(v.evidence()).containsEntry("rung", "3").containsEntry("stage", "import")
                .containsEntry("driverResultCode", 101).containsEntry("exporterGpu", 0).containsEntry("importerGpu", 1);
        assertThat(v.cause()).contains("fails already with CUDA_VISIBLE_DEVICES (rung 3, import: "
                + "CUDA_ERROR_INVALID_DEVICE (101))").contains("POSIX_FD between the same two processes passed")
                .contains("not the container stack");
        assertThat(v.severity().label()).isEqualTo("error");
    }

    @Test
    void posixFdThatFailedEarlierSaysNothingAboutTheLaterRung() {
        Finding v = LadderVerdicts.decide(ladder("pppffpp", "ppfffpp"), CONTEXT).getFirst();
        assertThat(v.code()).isEqualTo("LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE");
        assertThat(v.evidence().get("posixFd")).isEqualTo("POSIX_FD already failed on rung 2, so it tells nothing "
                + "about this one.");
    }

    @Test
    void aMoreIsolatedRungThatPassesAfterTheFirstFailureIsFlaggedInconsistent() {
        List<Finding> findings = LadderVerdicts.decide(ladder("pfppppp", "ppppppp"), CONTEXT);
        assertThat(codes(findings)).containsExactly("LADDER_FABRIC_FAILS_ACROSS_PROCESSES", "LADDER_INCONSISTENT");
        assertThat(findings.get(1).evidence()).containsEntry("laterPassing", "2, 3, 4");
    }

    @Test
    void channelVerdictsOnlyWhenTwoProcessesWorkAtAll() {
        // Rung 1 failing makes 5a's failure a consequence, not a channel finding.
        assertThat(codes(LadderVerdicts.decide(ladder("pffffff", "ppppppp"), CONTEXT)))
                .containsExactly("LADDER_FABRIC_FAILS_ACROSS_PROCESSES");
        List<Finding> both = LadderVerdicts.decide(ladder("pppffpf", "ppppppp"), CONTEXT);
        assertThat(codes(both)).containsExactly("LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE",
                "LADDER_CHANNELS_NOT_ENFORCED");
        assertThat(both.get(1).cause()).contains("exporter only channel0, importer only channel1");
    }

    @Test
    void anErrorAfterTheFirstFailureDoesNotHideTheVerdict() {
        List<Finding> findings = LadderVerdicts.decide(ladder("pppfepp", "pppfepp"), CONTEXT);
        assertThat(codes(findings)).containsExactly("LADDER_NEEDS_EXPORTER_GPU_VISIBLE");
        List<Finding> before = LadderVerdicts.decide(ladder("pepfppp", "peppppp"), CONTEXT);
        assertThat(codes(before).getFirst()).isEqualTo("LADDER_NOT_RUN");
        assertThat(before.getFirst().evidence()).containsEntry("rung", "1");
        assertThat(codes(before)).contains("LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE");
    }

    @Test
    void incompleteNamesTheSkippedRungsAndWhy() {
        Finding v = LadderVerdicts.decide(ladder("ppsssss", "ppsssss"), CONTEXT).getFirst();
        assertThat(v.evidence()).containsEntry("ranRungs", "0, 1").containsEntry("skippedRungs", "2, 3, 4, 5a, 5b");
        assertThat(v.cause()).contains("needs a second GPU");
    }
}
