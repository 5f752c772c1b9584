package dev.imexprobe.peer;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static dev.imexprobe.peer.ProbeJson.firstFailure;
import static dev.imexprobe.peer.ProbeJson.stage;
import static dev.imexprobe.peer.ProbeJson.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An agent killed (SIGKILL) in the middle of a probe leaves no allocation behind on either side: the survivor
 * releases what it holds once the export's TTL (3 s here) has passed, or at once when it is the importer. A
 * delay fault in the importer makes "the middle" a known place: the export exists and the import waits.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AgentKilledMidProbeIT {

    private static final Map<String, String> SHORT_TTL = Map.of("IMEXPROBE_EXPORTS_TTL", "3s");

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess exporter;
    static AgentProcess importer;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        exporter = AgentProcess.start("exporter", dir, machine.env(), "node-x", SHORT_TTL);
        importer = AgentProcess.start("importer", dir, machine.env(), "node-y", SHORT_TTL);
        AgentProcess.awaitReady(exporter, importer);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(exporter, importer);
    }

    /** The importer asks for a pull: the exporter exports, and the importer's next driver call is slowed down. */
    private static CompletableFuture<AgentProcess.Reply> pullWhile(AgentProcess asking, AgentProcess target) {
        CompletableFuture<AgentProcess.Reply> pending = CompletableFuture.supplyAsync(() ->
                asking.get("/probe?target=" + target.hostPort() + "&direction=pull"));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                .until(() -> !machine.stateFiles().isEmpty());
        return pending;
    }

    @Test
    @Order(1)
    void importerKilledAfterImportingLeavesNothingOnceTheExportExpires() throws Exception {
        // Imported, then stuck in cuMemMap when it dies: its imported handle dies with it.
        importer.faults("cuMemMap=delay:4000");
        CompletableFuture<AgentProcess.Reply> pending = pullWhile(importer, exporter);
        await().atMost(Duration.ofSeconds(30)).until(() ->
                importer.metric("imexprobe_allocations_live", "kind", "imported") == 1.0);
        importer.kill();
        assertThat(pending).failsWithin(Duration.ofSeconds(30));

        // Nobody will DELETE the export: the exporter releases it when its TTL (3 s) runs out.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).as("allocations of the fake host").isEmpty();
            assertThat(exporter.metric("imexprobe_allocations_live", "kind", "created")).isZero();
            assertThat(exporter.liveAllocations()).isZero();
        });
        assertThat(exporter.alive()).isTrue();
    }

    @Test
    @Order(2)
    void exporterKilledBeforeTheImportIsAHandleRejectedAndNothingStays() throws Exception {
        importer = AgentProcess.start("importer-2", dir, machine.env(), "node-y", SHORT_TTL).awaitReady();
        // The importer's first driver call in a pull is its import, made once the exporter has answered.
        String importStarts = importer.faultsWithCallMarker("cuMemImportFromShareableHandle=delay:3000");
        CompletableFuture<AgentProcess.Reply> pending = pullWhile(importer, exporter);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                .until(() -> importer.driverCalledSince(importStarts));
        exporter.kill();

        AgentProcess.Reply reply = pending.get();
        assertThat(reply.status()).isEqualTo(200);
        JsonNode r = reply.json().get("results").get(0);
        assertThat(text(r, "verdict")).isEqualTo("fail");
        assertThat(text(stage(r, "create"), "status")).isEqualTo("ok");
        assertThat(text(stage(r, "export"), "status")).isEqualTo("ok");
        JsonNode failed = firstFailure(r);
        assertThat(text(failed, "name")).isEqualTo("import");
        assertThat(failed.get("cuResult").asInt()).as("a handle whose exporter has exited: 801, as measured")
                .isEqualTo(801);
        assertThat(text(r.get("finding"), "code")).isEqualTo("HANDLE_REJECTED");
        JsonNode release = stage(r, "release");
        assertThat(text(release, "detail")).contains("could not ask the exporter to release")
                .contains("it expires by its TTL");

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).as("the dead exporter's allocation").isEmpty();
            assertThat(importer.liveAllocations()).isZero();
        });
    }
}
