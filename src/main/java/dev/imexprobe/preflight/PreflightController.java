package dev.imexprobe.preflight;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * GET /v1/preflight, only in a preflight process. Read-only and unauthenticated like /v1/mesh: it holds verdicts
 * and stage results, never a handle.
 */
@RestController
@Profile(PreflightConfiguration.PROFILE)
class PreflightController {

    private final PreflightState state;

    PreflightController(PreflightState state) {
        this.state = state;
    }

    @GetMapping(path = "/v1/preflight", produces = "application/json")
    PreflightStatus status() {
        return state.status();
    }
}
