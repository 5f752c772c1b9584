package dev.imexprobe.bench;

import dev.imexprobe.peer.AgentSignature;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.PeerHttp;

import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The HTTP floor: one loopback round trip of a probe's payload (request ≈ the POST /v1/imports body, response ≈
 * an ImportReply) from the agents' own client (PeerHttp as PeerClient builds it: HttpURLConnection, keep-alive,
 * the same headers) to a server that does nothing but answer: the JDK's HttpServer when the runtime has jdk.httpserver,
 * and always the bench's minimal socket server. No JSON is parsed: that is accounted for separately.
 */
final class HttpFloor {

    private HttpFloor() {
    }

    static boolean jdkServerAvailable() {
        return ModuleLayer.boot().findModule("jdk.httpserver").isPresent();
    }

    static Map<String, Object> run(JsonMapper json, int warmup, int n) throws Exception {
        byte[] request = json.writeValueAsBytes(Payloads.importBody(Payloads.randomHandle(), Payloads.SIZE,
                Payloads.uuid(2), 1234567890123L, 987654321098L, "bench-a", Payloads.uuid(1)));
        byte[] reply = json.writeValueAsBytes(Payloads.importReply("bench-b", "0123456789abcdef", Payloads.uuid(2)));
        String auth = new AgentSignature("bench-token-0123456789abcdef", Clock.systemUTC())
                .sign("POST", "/v1/imports", request);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("requestBytes", request.length);
        out.put("responseBytes", reply.length);
        out.put("client", "PeerHttp (HttpURLConnection, HTTP/1.1, keep-alive), as PeerClient.defaultHttp builds it");
        Stats socket;
        try (MiniHttpServer s = MiniHttpServer.start(0, (m, p, b) -> MiniHttpServer.Response.json(reply))) {
            socket = measure(s.port(), request, auth, warmup, n);
        }
        out.put("socketServer", socket.figures());
        if (jdkServerAvailable()) {
            Stats jdk = JdkServer.measure(request, reply, auth, warmup, n);
            out.put("jdkHttpServer", jdk.figures());
            out.put("server", "jdk.httpserver");
            out.put("p50", Stats.round(jdk.p50()));
            out.put("p99", Stats.round(jdk.p99()));
        } else {
            out.put("server", "minimal socket server (this runtime has no jdk.httpserver module)");
            out.put("p50", Stats.round(socket.p50()));
            out.put("p99", Stats.round(socket.p99()));
        }
        return out;
    }

    static Stats measure(int port, byte[] request, String auth, int warmup, int n) throws Exception {
        Map<String, String> headers = Map.of("Content-Type", "application/json", "Accept", "application/json",
                "Authorization", auth);
        double[] ms = new double[n];
        try (PeerHttp client = PeerClient.defaultHttp(Duration.ofSeconds(10))) {
            for (int i = -warmup; i < n; i++) {
                long t = System.nanoTime();
                PeerHttp.Answer answer = client.exchange("127.0.0.1:" + port, "POST", "/v1/imports", request, headers);
                long d = System.nanoTime() - t;
                if (answer.status() != 200 || answer.body().length == 0) {
                    throw new IOException("HTTP floor: unexpected answer " + answer.status());
                }
                if (i >= 0) {
                    ms[i] = d / 1e6;
                }
            }
        }
        return Stats.of(ms);
    }

    /** Only loaded when the runtime has jdk.httpserver. */
    private static final class JdkServer {

        static Stats measure(byte[] request, byte[] reply, String auth, int warmup, int n) throws Exception {
            com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            server.createContext("/", exchange -> {
                try (InputStream in = exchange.getRequestBody()) {
                    in.readAllBytes();
                }
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, reply.length);
                try (OutputStream o = exchange.getResponseBody()) {
                    o.write(reply);
                }
            });
            server.start();
            try {
                return HttpFloor.measure(server.getAddress().getPort(), request, auth, warmup, n);
            } finally {
                server.stop(0);
            }
        }
    }
}
