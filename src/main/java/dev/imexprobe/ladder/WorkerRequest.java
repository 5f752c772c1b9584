package dev.imexprobe.ladder;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.annotation.JsonTypeName;

import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.ladder.WorkerReply.DoneReply;
import dev.imexprobe.ladder.WorkerReply.InfoReply;
import dev.imexprobe.ladder.WorkerReply.ListenReply;
import dev.imexprobe.ladder.WorkerReply.NodeReply;
import dev.imexprobe.ladder.WorkerReply.StageReply;
import dev.imexprobe.ladder.WorkerReply.StagesReply;
import dev.imexprobe.ladder.WorkerReply.ViewReply;

/**
 * A request to a {@link Worker}: one JSON object on one line, its kind in {@code op}. The ladder writes these records
 * and the worker reads them (tests and the bench drive workers with the same records); each names the
 * {@link WorkerReply} its answer is read as. A worker answers a request it cannot serve with {@code ok:false} and an
 * {@code error}, which reads as any reply.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "op")
@JsonSubTypes({@JsonSubTypes.Type(WorkerRequest.Node.class), @JsonSubTypes.Type(WorkerRequest.View.class),
        @JsonSubTypes.Type(WorkerRequest.Info.class), @JsonSubTypes.Type(WorkerRequest.Export.class),
        @JsonSubTypes.Type(WorkerRequest.SendFd.class), @JsonSubTypes.Type(WorkerRequest.Listen.class),
        @JsonSubTypes.Type(WorkerRequest.ImportFd.class), @JsonSubTypes.Type(WorkerRequest.Import.class),
        @JsonSubTypes.Type(WorkerRequest.Verify.class), @JsonSubTypes.Type(WorkerRequest.Release.class),
        @JsonSubTypes.Type(WorkerRequest.SelfProbe.class), @JsonSubTypes.Type(WorkerRequest.Exit.class)})
@JsonInclude(JsonInclude.Include.NON_NULL)
public sealed interface WorkerRequest<R extends WorkerReply> {

    /** The buffer size when a request names none. */
    long DEFAULT_SIZE = 2L << 20;

    /** The record the answer is read as. */
    Class<R> replyType();

    /** The request's {@code op}, for messages. */
    default String op() {
        return getClass().getAnnotation(JsonTypeName.class).value();
    }

    /** The node as this process sees it: GPUs, driver status, the fake's folders. */
    @JsonTypeName("node")
    record Node() implements WorkerRequest<NodeReply> {
        public Class<NodeReply> replyType() {
            return NodeReply.class;
        }
    }

    /** What this process sees of devices, channels and namespaces ({@link ProcessView}). */
    @JsonTypeName("view")
    record View() implements WorkerRequest<ViewReply> {
        public Class<ViewReply> replyType() {
            return ViewReply.class;
        }
    }

    /** Live allocations and GPU UUIDs: what a test checks for leaks. */
    @JsonTypeName("info")
    record Info() implements WorkerRequest<InfoReply> {
        public Class<InfoReply> replyType() {
            return InfoReply.class;
        }
    }

    /**
     * Create and export a pattern buffer; the worker holds it until {@link Release}.
     *
     * @param seed the pattern's seed (0 when absent)
     * @param handleType FABRIC when absent
     */
    @JsonTypeName("export")
    record Export(Integer gpu, Long sizeBytes, Long seed, HandleType handleType) implements WorkerRequest<StagesReply> {
        public Export {
            gpu = gpu == null ? 0 : gpu;
            sizeBytes = sizeBytes == null ? DEFAULT_SIZE : sizeBytes;
            seed = seed == null ? 0L : seed;
            handleType = handleType == null ? HandleType.FABRIC : handleType;
        }

        public Class<StagesReply> replyType() {
            return StagesReply.class;
        }
    }

    /** Send the exported POSIX_FD descriptor to a listening importer over a Unix socket (SCM_RIGHTS). */
    @JsonTypeName("sendFd")
    record SendFd(String socket) implements WorkerRequest<StageReply> {
        public Class<StageReply> replyType() {
            return StageReply.class;
        }
    }

    /** Listen on a Unix socket for the descriptor an {@link ImportFd} then accepts. */
    @JsonTypeName("listen")
    record Listen(String socket) implements WorkerRequest<ListenReply> {
        public Class<ListenReply> replyType() {
            return ListenReply.class;
        }
    }

    /**
     * Accept the descriptor on the socket of {@link Listen} and import it.
     *
     * @param seed the pattern to verify; none (import, map, access only) when null
     * @param writebackSeed the pattern to write back for the exporter's {@link Verify}; none when null
     */
    @JsonTypeName("importFd")
    record ImportFd(Long sizeBytes, Integer gpu, Long seed, Long writebackSeed) implements WorkerRequest<StagesReply> {
        public ImportFd {
            sizeBytes = sizeBytes == null ? DEFAULT_SIZE : sizeBytes;
            gpu = gpu == null ? 0 : gpu;
        }

        public Class<StagesReply> replyType() {
            return StagesReply.class;
        }
    }

    /** Import a FABRIC handle (base64), as {@link ImportFd} does a descriptor. */
    @JsonTypeName("import")
    record Import(String handle, Long sizeBytes, Integer gpu, Long seed, Long writebackSeed)
            implements WorkerRequest<StagesReply> {
        public Import {
            sizeBytes = sizeBytes == null ? DEFAULT_SIZE : sizeBytes;
            gpu = gpu == null ? 0 : gpu;
        }

        public Class<StagesReply> replyType() {
            return StagesReply.class;
        }
    }

    /** Check the importer's write-back in the exported buffer. */
    @JsonTypeName("verify")
    record Verify(long seed) implements WorkerRequest<StageReply> {
        public Class<StageReply> replyType() {
            return StageReply.class;
        }
    }

    /** Release the exported buffer; a null stage when nothing was held. */
    @JsonTypeName("release")
    record Release() implements WorkerRequest<StageReply> {
        public Class<StageReply> replyType() {
            return StageReply.class;
        }
    }

    /** Rung 0: the whole exchange inside this one process; fresh seeds where null. */
    @JsonTypeName("selfProbe")
    record SelfProbe(Integer gpu, Long sizeBytes, HandleType handleType, Long seed, Long writebackSeed)
            implements WorkerRequest<StagesReply> {
        public SelfProbe {
            gpu = gpu == null ? 0 : gpu;
            sizeBytes = sizeBytes == null ? DEFAULT_SIZE : sizeBytes;
            handleType = handleType == null ? HandleType.FABRIC : handleType;
        }

        public Class<StagesReply> replyType() {
            return StagesReply.class;
        }
    }

    /** Release everything and exit. */
    @JsonTypeName("exit")
    record Exit() implements WorkerRequest<DoneReply> {
        public Class<DoneReply> replyType() {
            return DoneReply.class;
        }
    }
}
