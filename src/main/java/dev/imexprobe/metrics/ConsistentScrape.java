package dev.imexprobe.metrics;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;

/**
 * Runs /actuator/prometheus under {@link ImexprobeMetrics#consistent}, so the pair gauges of one scrape come from
 * one refresh. The endpoint's operation only builds the answer's bytes; Tomcat sends them after the lock is
 * released, so a scraper that reads slowly holds up no refresh.
 */
public final class ConsistentScrape implements OperationInvokerAdvisor {

    private static final EndpointId PROMETHEUS = EndpointId.of("prometheus");

    private final ImexprobeMetrics metrics;

    public ConsistentScrape(ImexprobeMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
                                  OperationInvoker invoker) {
        if (!PROMETHEUS.equals(endpointId)) {
            return invoker;
        }
        return context -> metrics.consistent(() -> invoker.invoke(context));
    }
}
