package dev.imexprobe.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.slf4j.LoggerFactory;

/**
 * What one class logs during one test, as a JUnit 5 extension on an instance field
 * ({@code @RegisterExtension final CapturedLogs logs = new CapturedLogs(Subject.class);}): the events in
 * {@code logs.list}, attached to that class's logger before each test and detached after it.
 */
public final class CapturedLogs extends ListAppender<ILoggingEvent> implements BeforeEachCallback, AfterEachCallback {

    private final Logger logger;

    public CapturedLogs(Class<?> of) {
        this.logger = (Logger) LoggerFactory.getLogger(of);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        list.clear();
        start();
        logger.addAppender(this);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        logger.detachAppender(this);
        stop();
    }
}
