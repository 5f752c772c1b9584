package dev.imexprobe.peer;

/**
 * Whether every exchange of a probe reached the agent it was meant for: the handle got through and the
 * answer came from the node the target said it was. Only then is its identity worth remembering.
 */
final class Confirmation {

    private volatile boolean unanswered;
    private volatile boolean mismatched;

    /** {@code answered}: the call got a usable answer; {@code sameNode}: from the node the target said it was. */
    void check(boolean answered, boolean sameNode) {
        if (!answered) {
            unanswered = true;
        } else if (!sameNode) {
            mismatched = true;
        }
    }

    boolean held() {
        return !unanswered && !mismatched;
    }

    /** Some answer came from an agent other than the one the target said it was. */
    boolean mismatched() {
        return mismatched;
    }
}
