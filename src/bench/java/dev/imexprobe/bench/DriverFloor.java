package dev.imexprobe.bench;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.Map;

/**
 * The driver floor as the ratio uses it: bench/driver_floor.c runs before the probes and again right after them,
 * and the two summaries are combined here into one of the same shape (each figure the mean of the two; min and max
 * over both), with both runs kept under {@code runs}.
 */
final class DriverFloor {

    private DriverFloor() {
    }

    static JsonNode combine(JsonMapper json, JsonNode before, JsonNode after) {
        ObjectNode out = json.createObjectNode();
        out.put("method", "mean of two runs of bench/driver_floor.c: before the probes and right after them");
        for (String k : List.of("unit", "sizeBytes", "library", "fake")) {
            out.set(k, before.get(k));
        }
        out.put("iterations", before.path("iterations").asInt() + after.path("iterations").asInt());
        ObjectNode cpu = out.putObject("cpuMsPerIteration");
        before.path("cpuMsPerIteration").properties().forEach(e -> cpu.put(e.getKey(),
                mean(e.getValue(), after.path("cpuMsPerIteration").path(e.getKey()))));
        ObjectNode stages = out.putObject("stages");
        before.path("stages").properties().forEach(e -> stages.set(e.getKey(), stats(json, e.getValue(),
                after.path("stages").path(e.getKey()))));
        out.set("total", stats(json, before.path("total"), after.path("total")));
        out.putArray("runs").add(before).add(after);
        return out;
    }

    private static ObjectNode stats(JsonMapper json, JsonNode a, JsonNode b) {
        ObjectNode s = json.createObjectNode();
        for (Map.Entry<String, JsonNode> e : a.properties()) {
            String k = e.getKey();
            double x = e.getValue().asDouble();
            double y = b.path(k).asDouble(x);
            s.put(k, k.equals("min") ? Math.min(x, y) : k.equals("max") ? Math.max(x, y) : Stats.round((x + y) / 2));
        }
        return s;
    }

    private static double mean(JsonNode a, JsonNode b) {
        double x = a.asDouble();
        return Stats.round((x + b.asDouble(x)) / 2);
    }
}
