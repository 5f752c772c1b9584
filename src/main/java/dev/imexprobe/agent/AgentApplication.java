package dev.imexprobe.agent;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** The agent's Spring Boot application: scans dev.imexprobe for controllers and configuration. */
@SpringBootApplication(scanBasePackages = "dev.imexprobe")
@EnableConfigurationProperties(AgentProperties.class)
public class AgentApplication {
}
