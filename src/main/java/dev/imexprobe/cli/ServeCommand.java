package dev.imexprobe.cli;

import dev.imexprobe.agent.AgentApplication;

import org.springframework.boot.SpringApplication;

/** {@code serve}: the Spring Boot agent. Returns -1: the JVM lives until the agent is stopped. */
final class ServeCommand {

    private ServeCommand() {
    }

    static int run(String[] args) {
        SpringApplication.run(AgentApplication.class, args);
        return -1;
    }
}
