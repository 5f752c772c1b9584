package dev.imexprobe.web;

import dev.imexprobe.agent.AgentProperties;
import dev.imexprobe.api.LadderRequest;
import dev.imexprobe.ladder.Ladder;
import dev.imexprobe.ladder.LadderOptions;
import dev.imexprobe.ladder.LadderReport;
import dev.imexprobe.node.AgentIdentity;

import jakarta.validation.Valid;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * POST /v1/ladder: the isolation ladder on this agent's node, the same document as {@code ladder --json}.
 * Off unless imexprobe.ladder.enabled=true (it starts a dozen processes and, with privileges, mount
 * namespaces), admin only ({@link AgentAuthFilter} guards the path before this runs), one run at a time (429
 * while one runs), and bounded: rungs that would start after {@link #BUDGET} are skipped, said so.
 */
@RestController
public class LadderController {

    static final Duration BUDGET = Duration.ofSeconds(LadderRequest.MAX_TIMEOUT_SECONDS);
    static final long RETRY_AFTER_SECONDS = 30;

    /** Runs one ladder. A bean of this type replaces the default: the ladder of this process's environment. */
    @FunctionalInterface
    public interface Runner {
        LadderReport run(LadderOptions options);
    }

    private final boolean enabled;
    private final Runner runner;
    private final AtomicBoolean running = new AtomicBoolean();

    @Autowired
    public LadderController(AgentProperties properties, AgentIdentity identity, ObjectProvider<Runner> runner) {
        this(properties.ladder().enabled(), runner.getIfAvailable(() -> Ladder.forThisProcess(identity.node())::run));
    }

    /** @param runner the ladder to run (the agent's own, or a test's) */
    public LadderController(boolean enabled, Runner runner) {
        this.enabled = enabled;
        this.runner = runner;
    }

    @PostMapping(path = "/v1/ladder", produces = MediaType.APPLICATION_JSON_VALUE)
    public LadderReport run(@Valid @RequestBody LadderRequest request) {
        if (!enabled) {
            throw new ApiException(HttpStatus.NOT_FOUND, "ladder-disabled", "the ladder is off on this agent: set "
                    + "imexprobe.ladder.enabled=true (IMEXPROBE_LADDER_ENABLED=true) to serve POST /v1/ladder, or "
                    + "run `imexprobe ladder` on the node");
        }
        LadderOptions options = options(request);
        if (!running.compareAndSet(false, true)) {
            throw new ApiException(HttpStatus.TOO_MANY_REQUESTS, "busy", "a ladder is already running on this agent "
                    + "(one at a time, each up to " + BUDGET.toSeconds() + " s); retry after " + RETRY_AFTER_SECONDS
                    + " s", RETRY_AFTER_SECONDS);
        }
        try {
            return runner.run(options);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        } finally {
            running.set(false);
        }
    }

    static LadderOptions options(LadderRequest request) {
        Integer[] pair = {null, null};
        if (request.gpus() != null) {
            try {
                pair = LadderOptions.parseGpus(request.gpus());
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid(e.getMessage());
            }
        }
        Long timeout = request.timeoutSeconds();
        try {
            return new LadderOptions(pair[0], pair[1], request.sizeBytes(),
                    timeout == null ? null : Duration.ofSeconds(timeout), BUDGET);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(e.getMessage());
        }
    }
}
