package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImexDaemonTest {

    static final String DOMAIN_UP = """
            {"nodes":{
              "1":{"status":"READY","host":"10.0.0.2","hostName":"node-b","version":"580.159.04",
                   "connections":{"0":{"host":"10.0.0.1","status":"CONNECTED","changed":false},
                                  "1":{"host":"10.0.0.2","status":"CONNECTED","changed":false}},"changed":true},
              "0":{"status":"READY","host":"10.0.0.1","hostName":"node-a","version":"580.159.04",
                   "connections":{"1":{"host":"10.0.0.2","status":"CONNECTED","changed":false},
                                  "0":{"host":"10.0.0.1","status":"CONNECTED","changed":false}},"changed":true}},
             "timestamp":"12/2/2025 11:08:00.123","status":"UP"}
            """;

    @TempDir
    Path root;

    private Path config() {
        return root.resolve("etc/nvidia-imex/config.cfg");
    }

    private ImexDaemon inspect(NodeInspectorSettings settings) {
        return new NodeInspector(settings).imexDaemon();
    }

    private void writeConfig(int serverPort, int cmdPort, Path nodeFile) throws Exception {
        Fixtures.write(config(), """
                # IMEX config (fixture)
                SERVER_PORT=%d
                IMEX_NODE_CONFIG_FILE=%s
                IMEX_CMD_PORT=%d
                IMEX_CMD_ENABLED=1
                # IMEX_CMD_ENABLED=0
                """.formatted(serverPort, nodeFile, cmdPort));
    }

    @Test
    void noToolAndNoConfigIsNotInstalled() {
        ImexDaemon daemon = inspect(Fixtures.settings(root));
        assertThat(daemon.state()).isEqualTo(ImexDaemonState.NOT_INSTALLED);
        assertThat(daemon.configPresent()).isFalse();
        assertThat(daemon.ctlPath()).isNull();
        assertThat(daemon.readiness()).isNull();
        assertThat(daemon.detail()).contains("single-node FABRIC works without it");
        assertThat(daemon.error()).isNull();
    }

    @Test
    void configWithoutToolIsConfigOnlyWithTheSettingsParsed() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int serverPort = 1024 + random.nextInt(60000);
        int cmdPort = 1024 + random.nextInt(60000);
        Path nodeFile = root.resolve("etc/nvidia-imex/nodes_config.cfg");
        int members = 1 + random.nextInt(18);
        StringBuilder nodes = new StringBuilder("# domain members\n\n");
        for (int i = 0; i < members; i++) {
            nodes.append("  10.1.0.").append(i + 1).append("  \n");
        }
        Fixtures.write(nodeFile, nodes + "# end\n");
        writeConfig(serverPort, cmdPort, nodeFile);

        ImexDaemon daemon = inspect(Fixtures.settings(root));

        assertThat(daemon.state()).isEqualTo(ImexDaemonState.CONFIG_ONLY);
        assertThat(daemon.configPresent()).isTrue();
        assertThat(daemon.configPath()).isEqualTo(config().toString());
        assertThat(daemon.config()).as("seed %d", seed).isEqualTo(
                new ImexConfig(serverPort, nodeFile.toString(), members, null, cmdPort, true, List.of()));
        assertThat(daemon.detail()).contains("no nvidia-imex-ctl was found");
    }

    @Test
    void badConfigValuesAreProblemsWithTheFix() {
        ImexConfig config = ImexDaemonInspector.parseConfig("""
                SERVER_PORT=70000
                IMEX_CMD_PORT=abc
                IMEX_CMD_ENABLED=maybe
                IMEX_NODE_CONFIG_FILE=nodes.cfg
                """);
        assertThat(config.serverPort()).isNull();
        assertThat(config.cmdPort()).isNull();
        assertThat(config.cmdEnabled()).isNull();
        assertThat(config.problems()).containsExactly(
                "SERVER_PORT='70000' is not a TCP port (1-65535); fix it in the IMEX config",
                "IMEX_CMD_PORT='abc' is not a TCP port (1-65535); fix it in the IMEX config",
                "IMEX_CMD_ENABLED='maybe' is not 0 or 1; fix it in the IMEX config");
        assertThat(config.nodeAddressCount()).isNull();
        assertThat(config.nodeConfigError()).contains("is relative");
    }

    @Test
    void unsetNodeFileMeansTheDaemonsDefault() {
        ImexConfig config = ImexDaemonInspector.parseConfig("IMEX_CMD_ENABLED=0\n");
        assertThat(config.cmdEnabled()).isFalse();
        assertThat(config.nodeConfigFile()).isEqualTo("/etc/nvidia-imex/nodes_config.cfg");
        assertThat(config.problems()).singleElement().asString().contains("IMEX_NODE_CONFIG_FILE is not set");
    }

    @Test
    void readyDaemonAndParsedDomain() throws Exception {
        Path nodeFile = Fixtures.write(root.resolve("etc/nvidia-imex/nodes_config.cfg"), "10.0.0.1\n10.0.0.2\n");
        writeConfig(50000, 50005, nodeFile);
        Path ctl = Fixtures.fakeCtl(root.resolve("bin"), "READY\n", 0, DOMAIN_UP);

        ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl));

        assertThat(daemon.state()).isEqualTo(ImexDaemonState.READY);
        assertThat(daemon.ctlPath()).isEqualTo(ctl.toString());
        assertThat(daemon.readiness().exitCode()).isZero();
        assertThat(daemon.readiness().timedOut()).isFalse();
        // A moved config is passed on, since the tool would otherwise read /etc/nvidia-imex/config.cfg.
        assertThat(daemon.readiness().command()).containsExactly(ctl.toString(), "-c", config().toString(), "-q");
        assertThat(daemon.domainQuery().command())
                .containsExactly(ctl.toString(), "-c", config().toString(), "-N", "-j");
        ImexDomain domain = daemon.domain();
        assertThat(domain.parse()).isEqualTo(ImexDomain.Parse.PARSED);
        assertThat(domain.status()).isEqualTo("UP");
        assertThat(domain.timestamp()).isEqualTo("12/2/2025 11:08:00.123");
        assertThat(domain.raw()).isNull();
        assertThat(domain.nodes()).extracting(ImexDomain.Node::id).containsExactly("0", "1");
        assertThat(domain.nodes().getFirst()).isEqualTo(new ImexDomain.Node("0", "READY", "10.0.0.1", "node-a",
                "580.159.04", List.of(new ImexDomain.Connection("0", "10.0.0.1", "CONNECTED"),
                        new ImexDomain.Connection("1", "10.0.0.2", "CONNECTED"))));
        assertThat(daemon.config().nodeAddressCount()).isEqualTo(2);
        assertThat(Files.readAllLines(root.resolve("bin/args.log"))).hasSize(2);
    }

    @Test
    void anythingButReadyIsNotReadyWithTheTextKept() throws Exception {
        for (String answer : List.of("NOT READY", "WAITING_FOR_PEERS", "")) {
            Path ctl = Fixtures.fakeCtl(root.resolve("bin-" + answer.length()), answer + "\n", 1,
                    "{\"nodes\":{},\"status\":\"DOWN\"}");
            ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl));
            assertThat(daemon.state()).as(answer).isEqualTo(ImexDaemonState.NOT_READY);
            assertThat(daemon.readiness().stdout()).isEqualTo(answer + "\n");
            assertThat(daemon.readiness().exitCode()).isEqualTo(1);
            assertThat(daemon.detail()).contains("'" + answer + "' (exit 1)");
            assertThat(daemon.domain().status()).isEqualTo("DOWN");
            assertThat(daemon.domain().nodes()).isEmpty();
        }
    }

    @Test
    void garbageAndUnknownShapesAreKeptRawAsUnparsed() throws Exception {
        Map<String, String> cases = Map.of(
                "Failed to read node configuration file /etc/nvidia-imex/nodes_config.cfg", "not JSON",
                "[1,2,3]", "not a JSON object",
                "{\"domain\":\"up\"}", "unknown shape",
                "", "printed nothing");
        int i = 0;
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Path ctl = Fixtures.fakeCtl(root.resolve("bin" + i++), "READY\n", 0, c.getKey());
            ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl));
            assertThat(daemon.state()).isEqualTo(ImexDaemonState.READY);
            assertThat(daemon.domain().parse()).as(c.getKey()).isEqualTo(ImexDomain.Parse.UNPARSED);
            assertThat(daemon.domain().raw()).as(c.getKey()).isEqualTo(c.getKey());
            assertThat(daemon.domain().error()).as(c.getKey()).contains(c.getValue());
            assertThat(daemon.domain().nodes()).isEmpty();
        }
    }

    @Test
    void domainParserToleratesPartialAndOddMembers() {
        ImexDomain domain = ImexDomainParser.parse("""
                {"status":"DEGRADED","nodes":{"10":{"status":"UNAVAILABLE","host":"10.0.0.11",
                  "connections":{"2":{"host":"10.0.0.3","status":"INVALID"},"x":7}},
                  "2":{"status":"READY","version":580,"connections":[]},"3":"garbled"},"extra":{"a":1}}
                """);
        assertThat(domain.parse()).isEqualTo(ImexDomain.Parse.PARSED);
        assertThat(domain.status()).isEqualTo("DEGRADED");
        assertThat(domain.timestamp()).isNull();
        assertThat(domain.nodes()).extracting(ImexDomain.Node::id).containsExactly("2", "10");
        assertThat(domain.nodes().getFirst().version()).isEqualTo("580");
        assertThat(domain.nodes().getFirst().connections()).isEmpty();
        assertThat(domain.nodes().get(1).connections())
                .containsExactly(new ImexDomain.Connection("2", "10.0.0.3", "INVALID"));
    }

    @Test
    void domainParserReadsRandomDomains() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String[] states = {"READY", "UNAVAILABLE", "WAITING_FOR_PEERS"};
        for (int round = 0; round < 50; round++) {
            int n = random.nextInt(20);
            StringBuilder json = new StringBuilder("{\"nodes\":{");
            for (int i = 0; i < n; i++) {
                json.append(i == 0 ? "" : ",").append('"').append(i).append("\":{\"status\":\"")
                        .append(states[random.nextInt(states.length)]).append("\",\"host\":\"10.0.0.").append(i)
                        .append("\",\"connections\":{}}");
            }
            json.append("},\"status\":\"").append(n == 0 ? "DOWN" : "UP").append("\"}");
            ImexDomain domain = ImexDomainParser.parse(json.toString());
            assertThat(domain.nodes()).as("seed %d", seed).hasSize(n);
            for (int i = 0; i < n; i++) {
                assertThat(domain.nodes().get(i).id()).as("seed %d", seed).isEqualTo(Integer.toString(i));
                assertThat(domain.nodes().get(i).host()).as("seed %d", seed).isEqualTo("10.0.0." + i);
            }
        }
    }

    @Test
    void aHangingToolIsKilledWithItsChildrenWithinTheBound() throws Exception {
        Duration bound = Duration.ofMillis(1500);
        Path dir = root.resolve("bin");
        Path ctl = Fixtures.hangingCtl(dir);

        long start = System.nanoTime();
        ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl).withImexCtlTimeout(bound));
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        assertThat(elapsed).isLessThan(bound.plusSeconds(2));
        assertThat(daemon.state()).isEqualTo(ImexDaemonState.TIMEOUT);
        assertThat(daemon.detail()).contains("did not answer within 1500 ms");
        assertThat(daemon.readiness().timedOut()).isTrue();
        assertThat(daemon.readiness().exitCode()).isNull();
        assertThat(daemon.domainQuery().timedOut()).isTrue();
        assertThat(daemon.domain()).isNull();
        assertThat(daemon.readiness().durationSeconds()).isGreaterThanOrEqualTo(1.5).isLessThan(3.5);
        // Both calls ran at once: one bound for the part, not two.
        assertThat(elapsed).isLessThan(bound.multipliedBy(2));

        List<Long> pids = Fixtures.recordedPids(dir, 2);
        assertThat(pids).hasSize(4).contains(daemon.readiness().pid(), daemon.domainQuery().pid());
        for (long pid : pids) {
            assertThat(Fixtures.runningWithin(pid, Duration.ofSeconds(2))).as("pid %d still running", pid).isFalse();
        }
    }

    @Test
    void outputLargerThanAPipeBufferDoesNotDeadlock() throws Exception {
        Path dir = root.resolve("bin");
        Fixtures.fakeCtl(dir, "READY\n", 0, DOMAIN_UP);
        // Wrap the fake: 512 KiB on stderr before answering, far past the 64 KiB pipe buffer.
        Path ctl = Fixtures.executable(root.resolve("loud/nvidia-imex-ctl"), """
                #!/bin/sh
                head -c 524288 /dev/zero | tr '\\000' x >&2
                exec '%s' "$@"
                """.formatted(dir.resolve("nvidia-imex-ctl")));

        ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl));

        assertThat(daemon.state()).isEqualTo(ImexDaemonState.READY);
        assertThat(daemon.readiness().timedOut()).isFalse();
        assertThat(daemon.readiness().stderr()).hasSize(ImexCtl.OUTPUT_CAP);
        assertThat(daemon.domain().status()).isEqualTo("UP");
    }

    @Test
    void aToolThatCannotStartIsAnError() throws Exception {
        Path ctl = Fixtures.executable(root.resolve("bin/nvidia-imex-ctl"), "#!/nonexistent/interpreter\n");

        ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl));

        assertThat(daemon.state()).isEqualTo(ImexDaemonState.ERROR);
        assertThat(daemon.readiness().pid()).isNull();
        assertThat(daemon.detail()).startsWith("cannot start " + ctl).contains("executable");
    }

    @Test
    void aConfiguredToolThatIsMissingIsSaid() {
        Path ctl = root.resolve("nowhere/nvidia-imex-ctl");
        ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtl(ctl));
        assertThat(daemon.state()).isEqualTo(ImexDaemonState.NOT_INSTALLED);
        assertThat(daemon.error()).contains(ctl + " does not exist");
    }

    @Test
    void theToolIsFoundOnPathFromTheEnvironment() throws Exception {
        Path bin = root.resolve("bin");
        Path ctl = Fixtures.fakeCtl(bin, "READY\n", 0, DOMAIN_UP);
        NodeInspectorSettings settings = Fixtures.settings(root).withImexCtlSearchDirs(null)
                .withEnv(Map.of("PATH", "relative/dir:" + root.resolve("empty") + ":" + bin));

        assertThat(settings.imexCtlSearchPath()).containsExactly(root.resolve("empty"), bin, Path.of("/usr/bin"),
                Path.of("/usr/sbin"), Path.of("/usr/local/bin"));
        ImexDaemon daemon = inspect(settings);
        assertThat(daemon.ctlPath()).isEqualTo(ctl.toString());
        assertThat(daemon.state()).isEqualTo(ImexDaemonState.READY);
    }

    @Test
    void aNonExecutableFileOnThePathIsNotTheTool() throws Exception {
        Path bin = root.resolve("bin");
        Fixtures.write(bin.resolve("nvidia-imex-ctl"), "#!/bin/sh\necho READY\n");
        ImexDaemon daemon = inspect(Fixtures.settings(root).withImexCtlSearchDirs(List.of(bin)));
        assertThat(daemon.ctlPath()).isNull();
        assertThat(daemon.state()).isEqualTo(ImexDaemonState.NOT_INSTALLED);
    }
}
