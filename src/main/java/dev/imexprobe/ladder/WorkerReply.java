package dev.imexprobe.ladder;

import com.fasterxml.jackson.annotation.JsonInclude;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.probe.StageEngine;
import dev.imexprobe.probe.StageResult;

import java.util.List;
import java.util.Map;

/**
 * A {@link Worker}'s answer to a {@link WorkerRequest}, one JSON object on one line. Every answer says {@code ok};
 * a refused request ({@code ok:false}) says why in {@code error}, and reads as any of these records.
 */
public sealed interface WorkerReply {

    boolean ok();

    /** Why the worker could not serve the request; null when it could. */
    String error();

    /**
     * @param init the CUresult of cuInit
     * @param fake the fake driver's self-description; null on a real driver
     * @param driverProblem why no driver library could be used (the ladder reports it as NO_DRIVER); null when one was
     * @param library the CUDA library that was opened
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record NodeReply(boolean ok, String init, List<GpuDevice> gpus, Map<String, String> fake, String driverProblem,
                     String library, String error) implements WorkerReply {
    }

    /** The stages of an export, an import or a self-probe; {@code handle} is an exported FABRIC handle (base64). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record StagesReply(boolean ok, String handle, List<StageResult> stages, String error) implements WorkerReply {
        /** Stages that passed or not. */
        static StagesReply of(List<StageResult> stages) {
            return new StagesReply(StageEngine.passed(stages), null, stages, null);
        }
    }

    /** One stage: a descriptor sent, a write-back checked, a release (null when nothing was held). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record StageReply(boolean ok, StageResult stage, String error) implements WorkerReply {
    }

    /** @param errno 0 when listening; null when the worker refused the request */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record ListenReply(boolean ok, Integer errno, String error) implements WorkerReply {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record ViewReply(boolean ok, ProcessView view, String error) implements WorkerReply {
    }

    /** @param gpus the UUIDs of the GPUs this process sees */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record InfoReply(boolean ok, Map<String, String> fake, Long liveAllocations, List<String> gpus, String error)
            implements WorkerReply {
    }

    /** The answer to {@code exit}, and to a request the worker refused. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record DoneReply(boolean ok, String error) implements WorkerReply {
    }
}
