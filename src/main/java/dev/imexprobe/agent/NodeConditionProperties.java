package dev.imexprobe.agent;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.time.Duration;

/**
 * The {@code ImexFabricImport} Node condition (IMEXPROBE_NODECONDITION_ENABLED, …): off unless enabled; the chart
 * enables it. The node is IMEXPROBE_NODE_NAME ({@code imexprobe.node.name}).
 *
 * @param enabled        write the condition and its Events
 * @param rounds         failed rounds in a row before a pair counts as failing (the alerts' debounce)
 * @param heartbeat      the longest time between two patches while nothing changes
 * @param interval       how often the condition is judged; unset: the mesh interval
 * @param eventNamespace where Node Events are created ({@code default}, as the kubelet's)
 * @param eventBurst     Events sent at once before the rate limit
 * @param eventRefill    one more Event allowed per this much time
 * @param channelExpected false when the agent is deliberately given no IMEX channel (the chart's
 *                       {@code imex.channel.mode=observer}): then no channel means Unknown, not False
 * @param ordinal        per-GPU mode: only the StatefulSet pod with this ordinal (its name, HOSTNAME, ends in
 *                       {@code -N}) writes, so that a node's several agents do not flap its one condition; -1: every
 *                       agent writes (one agent per node)
 */
@ConfigurationProperties("imexprobe.node-condition")
public record NodeConditionProperties(@DefaultValue("false") boolean enabled, @DefaultValue("2") int rounds,
                                      @DefaultValue("5m") Duration heartbeat, Duration interval,
                                      @DefaultValue("default") String eventNamespace,
                                      @DefaultValue("5") int eventBurst, @DefaultValue("1m") Duration eventRefill,
                                      @DefaultValue("-1") int ordinal,
                                      @DefaultValue("true") boolean channelExpected) {

    public NodeConditionProperties {
        heartbeat = heartbeat == null ? Duration.ofMinutes(5) : heartbeat;
        eventRefill = eventRefill == null ? Duration.ofMinutes(1) : eventRefill;
        eventNamespace = eventNamespace == null || eventNamespace.isBlank() ? "default" : eventNamespace.strip();
        if (rounds < 1 || rounds > 100) {
            throw new IllegalArgumentException("imexprobe.node-condition.rounds must be 1..100, got " + rounds);
        }
        if (heartbeat.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("imexprobe.node-condition.heartbeat must be at least 1s, got "
                    + heartbeat);
        }
        if (interval != null && interval.compareTo(Duration.ofMillis(200)) < 0) {
            throw new IllegalArgumentException("imexprobe.node-condition.interval must be at least 200ms, got "
                    + interval);
        }
        if (ordinal < -1) {
            throw new IllegalArgumentException("imexprobe.node-condition.ordinal must be -1 (every agent writes) or "
                    + "a StatefulSet ordinal, got " + ordinal);
        }
        if (eventBurst < 1 || eventRefill.isNegative() || eventRefill.isZero()) {
            throw new IllegalArgumentException("imexprobe.node-condition: event-burst must be at least 1 and "
                    + "event-refill positive (event-burst=" + eventBurst + ", event-refill=" + eventRefill + ")");
        }
    }

    /** Whether the agent in the pod named {@code hostname} writes the condition. */
    public boolean writesFrom(String hostname) {
        return ordinal < 0 || hostname != null && hostname.endsWith("-" + ordinal);
    }
}
