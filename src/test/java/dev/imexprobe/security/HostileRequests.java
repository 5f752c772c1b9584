package dev.imexprobe.security;

import dev.imexprobe.peer.AgentSignature;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Hostile requests against one agent, drawn from a seeded {@link Random}: each a {@link Case} saying what is sent,
 * which documented operation it aims at (null when the path is an odd spelling), whether it carries a valid
 * credential, and which statuses are right for it. The mix and what each family holds are in {@link #next()}.
 */
final class HostileRequests {

    static final long GRANULARITY = 2L << 20;
    static final int MAX_BODY = 16 * 1024;

    /** What the generator needs to know about the agent under test and what earlier requests left behind. */
    interface World {
        int agentPort();

        /** Another agent of the same machine, the target of the probes that must pass. */
        int peerPort();

        /** A port where nothing listens. */
        int closedPort();

        /** A stranger that is not an agent (answers 404 to everything): "the API host". */
        int strangerPort();

        String token();

        /** The handle of the export with the known seed (never deleted during the run). */
        String knownHandle();

        long knownSize();

        long knownSeed();

        long knownWritebackSeed();

        List<String> liveExports();

        List<String> deletedExports();

        /** Handles of exports that were deleted: released, so an import must fail. */
        List<String> releasedHandles();

        List<String> gpuUuids();

        void deleted(String id);
    }

    /**
     * One request and what is right for it.
     *
     * @param operation    "METHOD /documented/path" when the request is a well-formed call of that operation
     * @param credentialed carries the right token or a valid signature
     * @param expect       the statuses that are right; empty = any status below 500
     * @param check        further assertions on the answer (throws AssertionError)
     * @param after        bookkeeping once answered (the new export id, …)
     */
    record Case(String family, RawHttp.Request request, String operation, boolean credentialed, Set<Integer> expect,
                Consumer<RawHttp.Reply> check, Consumer<RawHttp.Reply> after) {
    }

    private final Random r;
    private final RandomJson json;
    private final World w;
    private final AgentSignature ours;
    private final AgentSignature otherToken = new AgentSignature("another-token-0123456789abcdef", Clock.systemUTC());

    HostileRequests(long seed, World world) {
        this.r = new Random(seed);
        this.json = new RandomJson(r);
        this.w = world;
        this.ours = new AgentSignature(world.token(), Clock.systemUTC());
    }

    /** The next case: imports 30 %, exports 15 %, /probe 20 %, credentials 20 %, methods and paths 15 %. */
    Case next() {
        int k = r.nextInt(100);
        if (k < 30) {
            return importCase();
        }
        if (k < 45) {
            return exportCase();
        }
        if (k < 65) {
            return probeCase();
        }
        if (k < 85) {
            return credentialCase();
        }
        return pathCase();
    }

    // ---- POST /v1/imports ------------------------------------------------------------------------------------------

    private static final List<String> IMPORT_FIELDS = List.of("handle", "handleType", "sizeBytes", "gpu", "seed",
            "writebackSeed", "exporterNode");

    private Case importCase() {
        int k = r.nextInt(20);
        if (k < 3) {
            return bearer("imports/random-json", "POST", "/v1/imports", json.object(3, IMPORT_FIELDS).getBytes(StandardCharsets.UTF_8),
                    Set.of(400), "POST /v1/imports");
        }
        if (k < 5) {
            return bearer("imports/broken-json", "POST", "/v1/imports", json.broken(), Set.of(400), "POST /v1/imports");
        }
        if (k == 5) {
            // Near and over the 16 KiB body limit.
            int size = MAX_BODY - 64 + r.nextInt(128);
            return bearer("imports/near-body-limit", "POST", "/v1/imports", json.sized(size, "exporterNode"),
                    Set.of(400), "POST /v1/imports");
        }
        if (k == 6) {
            return bearer("imports/far-over-body-limit", "POST", "/v1/imports",
                    json.sized(MAX_BODY * (2 + r.nextInt(60)), "handle"), Set.of(400), "POST /v1/imports");
        }
        // A well-formed request with one or two hostile fields.
        String handle = Base64.getEncoder().encodeToString(json.randomBytes(64));
        String handleKind = "random";
        long size = GRANULARITY;
        String sizeText = null;
        String type = "FABRIC";
        String extra = "";
        Set<Integer> expect = Set.of(200);
        Consumer<RawHttp.Reply> check = Replies.verdict("fail");
        switch (r.nextInt(16)) {
            case 0, 1 -> { // random 64 bytes: the driver refuses them (801)
                check = Replies.importRefused();
            }
            case 2, 3, 4 -> { // a mutation of a real handle: 1..8 bits flipped, or bytes swapped
                byte[] b = Base64.getDecoder().decode(w.knownHandle());
                int flips = 1 + r.nextInt(8);
                for (int i = 0; i < flips; i++) {
                    b[r.nextInt(64)] ^= (byte) (1 << r.nextInt(8));
                }
                if (r.nextBoolean()) {
                    int i = r.nextInt(64);
                    int j = r.nextInt(64);
                    byte t = b[i];
                    b[i] = b[j];
                    b[j] = t;
                }
                handleKind = "mutated";
                handle = Base64.getEncoder().encodeToString(b);
                check = Base64.getEncoder().encodeToString(b).equals(w.knownHandle()) ? Replies.verdict("pass")
                        : Replies.importRefused();
            }
            case 5 -> { // the real handle, replayed: a capability works every time, and reports only a verdict
                handleKind = "replayed";
                handle = w.knownHandle();
                size = w.knownSize();
                check = Replies.verdict("pass");
                if (r.nextBoolean()) {
                    extra = ",\"seed\":\"" + w.knownSeed() + "\",\"writebackSeed\":\"" + w.knownWritebackSeed() + "\"";
                }
            }
            case 6 -> { // a released handle
                if (!w.releasedHandles().isEmpty()) {
                    handleKind = "released";
                    handle = w.releasedHandles().get(r.nextInt(w.releasedHandles().size()));
                    check = Replies.importRefused();
                }
            }
            case 7 -> { // wrong length
                int[] lengths = {0, 1, 32, 63, 65, 96, 128, 1000};
                int n = lengths[r.nextInt(lengths.length)];
                handleKind = "length-" + n;
                handle = Base64.getEncoder().encodeToString(json.randomBytes(n));
                expect = Set.of(400);
                check = null;
            }
            case 8 -> { // not base64
                String[] bad = {"!!!!", "AAAA====", "A", "AA=A", "\\u0000AAA", "AAAA\\nAAAA", "ÀÁÂÃ", "%41%41",
                        "AAAA AAAA", "-_-_" + "A".repeat(82), "A".repeat(85), "A".repeat(4000)};
                handleKind = "bad-base64";
                handle = bad[r.nextInt(bad.length)];
                // The URL-safe alphabet is accepted, and 86 characters of it decode to 64 bytes: a random handle.
                boolean decodes = handle.startsWith("-_-_");
                expect = decodes ? Set.of(200) : Set.of(400);
                check = decodes ? Replies.importRefused() : null;
            }
            case 9, 10 -> { // size
                String[] sizes = {"-1", "0", "-2097152", "1", "3", "2097151", "2097153", "1073741826",
                        "1075838976", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "1e400",
                        "2097152.5", "\"2097152\"", "\"-5\"", "\"2 MiB\"", "\" 2097152 \"", "true", "[]", "{}",
                        "null", "\"\""};
                sizeText = sizes[r.nextInt(sizes.length)];
                expect = switch (sizeText) {
                    case "1073741826", "1075838976", "9223372036854775807" -> Set.of(413);
                    case "\"2097152\"", "\" 2097152 \"" -> Set.of(200);
                    default -> Set.of(400);
                };
                check = expect.contains(200) ? Replies.importRefused() : null;
            }
            case 11 -> { // unknown handle type
                String[] types = {"POSIX_FD", "fabric", "Fabric", "", "FABRIC ", "FABRIC\\u0000", "WIN32",
                        "X".repeat(300), "1", "null"};
                type = types[r.nextInt(types.length)];
                // Case and surrounding whitespace (a NUL counts as such) do not matter.
                boolean fabric = type.equals("fabric") || type.equals("Fabric") || type.equals("FABRIC ")
                        || type.equals("FABRIC\\u0000");
                expect = fabric ? Set.of(200) : Set.of(400);
                check = fabric ? Replies.importRefused() : null;
            }
            case 12 -> { // gpu
                String[] gpus = {"-1", "2", "99999999999", "\"GPU-nope\"", "\"\"", "true", "[0]", "{\"a\":1}", "0.5",
                        "\"0\"", "1", "\"" + w.gpuUuids().get(r.nextInt(w.gpuUuids().size())) + "\""};
                String g = gpus[r.nextInt(gpus.length)];
                extra = ",\"gpu\":" + g;
                boolean valid = g.equals("\"0\"") || g.equals("1") || g.startsWith("\"GPU-") && !g.equals("\"GPU-nope\"");
                expect = valid ? Set.of(200) : Set.of(400);
                check = valid ? Replies.importRefused() : null;
            }
            case 13 -> { // seeds of every type
                String[] seeds = {"1", "-1", "\"abc\"", "1e400", "18446744073709551616", "[]", "\"9223372036854775807\""};
                String s = seeds[r.nextInt(seeds.length)];
                boolean validSeed = s.equals("1") || s.equals("-1") || s.equals("\"9223372036854775807\"");
                extra = ",\"seed\":" + s + (r.nextBoolean() ? ",\"writebackSeed\":" + s : "");
                expect = validSeed ? Set.of(200) : Set.of(400);
                check = validSeed ? Replies.importRefused() : null;
            }
            case 14 -> { // unknown field, duplicate keys
                extra = r.nextBoolean() ? ",\"" + json.string() + "x\":1" : ",\"handleType\":\"FABRIC\"";
                expect = extra.contains("x\":1") ? Set.of(400) : Set.of(200);
                check = expect.contains(200) ? Replies.importRefused() : null;
            }
            default -> { // exporterNode of any length and content
                extra = ",\"exporterNode\":\"" + json.string() + "\"";
                check = Replies.importRefused();
            }
        }
        String body = "{\"handle\":\"" + handle + "\",\"handleType\":\"" + type + "\",\"sizeBytes\":"
                + (sizeText != null ? sizeText : Long.toString(size)) + extra + "}";
        return new Case("imports/" + handleKind, bearerRequest("POST", "/v1/imports")
                .json(body.getBytes(StandardCharsets.UTF_8)), "POST /v1/imports", true, expect,
                check == null ? x -> { } : check, x -> { });
    }

    // ---- POST /v1/exports, verify, DELETE -------------------------------------------------------------------------

    private static final List<String> EXPORT_FIELDS = List.of("gpu", "sizeBytes", "handleType", "seed");

    private Case exportCase() {
        int k = r.nextInt(20);
        if (k < 3) {
            return bearer("exports/random-json", "POST", "/v1/exports",
                    json.object(3, EXPORT_FIELDS).getBytes(StandardCharsets.UTF_8), Set.of(201, 400, 413), "POST /v1/exports");
        }
        if (k == 3) {
            return bearer("exports/broken-json", "POST", "/v1/exports", json.broken(), Set.of(400), "POST /v1/exports");
        }
        if (k < 7) {
            // A valid export (bounded: a few MiB, so the fake's files stay small), kept for verify and DELETE.
            long size = GRANULARITY * (1 + r.nextInt(4));
            String body = "{\"sizeBytes\":" + size + ",\"handleType\":\"FABRIC\",\"gpu\":" + r.nextInt(2)
                    + (r.nextBoolean() ? ",\"seed\":\"" + r.nextLong() + "\"" : "") + "}";
            boolean room = w.liveExports().size() < 24;
            if (!room) {
                return deleteCase(w.liveExports().get(r.nextInt(w.liveExports().size())), true);
            }
            return new Case("exports/create", bearerRequest("POST", "/v1/exports").json(body.getBytes(StandardCharsets.UTF_8)),
                    "POST /v1/exports", true, Set.of(201), Replies.exported(size), x -> { });
        }
        if (k < 10) {
            String[] sizes = {"-2097152", "0", "1", "1075838976", "9223372036854775807", "\"1e3\"", "2097152.0",
                    "1.0E7", "\"-0\""};
            String s = sizes[r.nextInt(sizes.length)];
            Set<Integer> expect = s.equals("1075838976") || s.equals("9223372036854775807") ? Set.of(413) : Set.of(400);
            return bearer("exports/hostile-size", "POST", "/v1/exports",
                    ("{\"sizeBytes\":" + s + "}").getBytes(StandardCharsets.UTF_8), expect, "POST /v1/exports");
        }
        if (k < 14) {
            String id = exportId();
            String[] seeds = {"1", "\"" + r.nextLong() + "\"", "\"x\"", "[]", "1e400", "null"};
            String seed = seeds[r.nextInt(seeds.length)];
            boolean validSeed = seed.equals("1") || seed.startsWith("\"") && !seed.equals("\"x\"");
            boolean known = w.liveExports().contains(id);
            // An id the container refuses to map (%00, an encoded slash) is a 400 before anything looks it up.
            Set<Integer> expect = !validSeed ? Set.of(400) : known ? Set.of(200) : Set.of(400, 404);
            String path = "/v1/exports/" + id + "/verify";
            return new Case("exports/verify", bearerRequest("POST", path).json(("{\"seed\":" + seed + "}")
                    .getBytes(StandardCharsets.UTF_8)), "POST /v1/exports/{id}/verify", true, expect,
                    x -> { }, x -> { });
        }
        String id = exportId();
        return deleteCase(id, w.liveExports().contains(id));
    }

    private Case deleteCase(String id, boolean live) {
        return new Case("exports/delete", bearerRequest("DELETE", "/v1/exports/" + id), "DELETE /v1/exports/{id}",
                true, live ? Set.of(200) : Set.of(400, 404), x -> { }, reply -> {
                    if (reply.status() == 200) {
                        w.deleted(id);
                    }
                });
    }

    /** A live id, a deleted one, or something that never was one (percent-encoded so it stays one segment). */
    private String exportId() {
        int k = r.nextInt(6);
        if (k < 2 && !w.liveExports().isEmpty()) {
            return w.liveExports().get(r.nextInt(w.liveExports().size()));
        }
        if (k < 4 && !w.deletedExports().isEmpty()) {
            return w.deletedExports().get(r.nextInt(w.deletedExports().size()));
        }
        String[] odd = {"x", "0", "-1", "%00", "%2e%2e", "..%2f..%2f", "AAAAAAAAAAAAAAAAAAAAAA", "A".repeat(2000),
                "%C3%A9", "%E2%80%AE", "null", "%20"};
        return odd[r.nextInt(odd.length)];
    }

    // ---- GET /probe -----------------------------------------------------------------------------------------------

    private Case probeCase() {
        int agent = w.agentPort();
        List<String> targets = List.of("127.0.0.1:" + w.closedPort(), "127.0.0.1:" + w.strangerPort(),
                "localhost:" + w.closedPort(), "[::1]:" + w.closedPort(), "[::1]:" + agent,
                "[::ffff:127.0.0.1]:" + w.closedPort(), "[fe80::1%25lo]:" + w.closedPort(), "[::]:1", "[:::]:80",
                "[fd00::1]:99999", "::1:80", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1", ":80",
                "127.0.0.1:80/admin", "127.0.0.1:80?x=1", "127.0.0.1:80%23frag", "user%40127.0.0.1:80",
                "a%0d%0aX-Injected:%201:80", "%00:80", "127.0.0.1%00:80", "%zz:80", "%ff%fe:80",
                "%E2%80%AE:80", "127.0.0.1:" + w.closedPort() + "&target=127.0.0.1:" + agent,
                "a".repeat(300) + ":80", "a.".repeat(130) + "b:80", "x".repeat(5_000) + ":80",
                "x".repeat(10_000) + ":80", "%5B::1%5D:" + w.closedPort(), "0x7f.1:" + w.closedPort(),
                "2130706433:" + w.closedPort(), "127.1:" + w.closedPort(), "[v1.x]:80");
        int k = r.nextInt(20);
        String target;
        boolean ofPeer = k == 0;
        boolean itself = k == 1;
        if (ofPeer) {
            target = "127.0.0.1:" + w.peerPort(); // a full probe of the other agent of the machine
        } else if (itself) {
            target = (r.nextBoolean() ? "127.0.0.1:" : "localhost:") + agent; // refused: the agent itself
        } else {
            target = targets.get(r.nextInt(targets.size()));
        }
        StringBuilder q = new StringBuilder("/probe?target=").append(target);
        String[] directions = {"push", "pull", "both", "PUSH", "sideways", "", "%00"};
        String[] bools = {"true", "false", "1", "0", "yes", "no", "maybe", "", "TRUE"};
        String[] formats = {"json", "prometheus", "xml", "", "PROMETHEUS"};
        String[] sizes = {"2097152", "4194304", "-1", "0", "3", "1e3", "99999999999", "9223372036854775808", "",
                "2097152.0", "%20"};
        String[] gpus = {"0", "1", "2", "-1", "GPU-nope", "", "%00", w.gpuUuids().get(0)};
        boolean valid = true;
        if (ofPeer || itself) {
            q.append("&direction=").append(r.nextBoolean() ? "push" : "pull");
            q.append("&gpu=").append(r.nextInt(2)).append("&peerGpu=").append(r.nextInt(2));
            q.append("&writeback=").append(r.nextBoolean());
            if (r.nextBoolean()) {
                q.append("&format=prometheus");
            }
            if (r.nextBoolean()) {
                q.append("&debug=true");
            }
        } else {
            if (r.nextBoolean()) {
                q.append("&direction=").append(directions[r.nextInt(directions.length)]);
            }
            if (r.nextInt(3) == 0) {
                q.append("&writeback=").append(bools[r.nextInt(bools.length)]);
            }
            if (r.nextInt(3) == 0) {
                q.append("&debug=").append(bools[r.nextInt(bools.length)]);
            }
            if (r.nextInt(3) == 0) {
                q.append("&format=").append(formats[r.nextInt(formats.length)]);
            }
            if (r.nextInt(3) == 0) {
                q.append("&sizeBytes=").append(sizes[r.nextInt(sizes.length)]);
            }
            if (r.nextInt(3) == 0) {
                q.append("&gpu=").append(gpus[r.nextInt(gpus.length)]);
            }
            if (r.nextInt(4) == 0) {
                q.append("&peerGpu=").append(gpus[r.nextInt(gpus.length)]);
            }
            if (r.nextInt(5) == 0) {
                q.append("&").append(json.string().replace("\\", "%5C").replace("\"", "%22")).append("=1");
            }
            if (r.nextInt(8) == 0) {
                q.append("&target=127.0.0.1:").append(agent); // a second target
            }
            valid = false;
        }
        String path = q.toString();
        // Raw characters a client may put in a query and a server must survive.
        if (!ofPeer && !itself && r.nextInt(10) == 0) {
            String[] raw = {"[", "]", "|", "{", "}", "\"", "<", "^", "`", " ", "é"};
            path = path + raw[r.nextInt(raw.length)];
        }
        RawHttp.Request req = RawHttp.Request.of("GET", path);
        if (r.nextInt(10) == 0) {
            req.header("Authorization", "Bearer " + w.token()); // a token where none is needed changes nothing
        }
        Set<Integer> expect = ofPeer ? Set.of(200) : itself ? Set.of(400) : Set.of();
        Consumer<RawHttp.Reply> check = ofPeer ? Replies.probePassed() : itself ? Replies.probeOfItselfRefused()
                : valid ? x -> { } : Replies.probeNeverPassesElsewhere();
        String family = ofPeer ? "probe/peer" : itself ? "probe/itself" : "probe/hostile-query";
        return new Case(family, req, path.length() < 8000 && !path.contains(" ") ? "GET /probe" : null, true, expect,
                check, x -> { });
    }

    // ---- credentials ----------------------------------------------------------------------------------------------

    private Case credentialCase() {
        String[] paths = {"/v1/imports", "/v1/exports", "/v1/exports/x/verify", "/v1/exports/x", "/v1/ladder"};
        String path = paths[r.nextInt(paths.length)];
        String method = path.equals("/v1/exports/x") ? "DELETE" : "POST";
        byte[] body = path.equals("/v1/exports/x") ? null : "{}".getBytes(StandardCharsets.UTF_8);
        String operation = switch (path) {
            case "/v1/exports/x/verify" -> "POST /v1/exports/{id}/verify";
            case "/v1/exports/x" -> "DELETE /v1/exports/{id}";
            default -> method + " " + path;
        };
        String auth;
        String kind;
        int k = r.nextInt(22);
        long now = Instant.now().getEpochSecond();
        switch (k) {
            case 0 -> {
                kind = "none";
                auth = null;
            }
            case 1 -> {
                kind = "wrong-bearer";
                auth = "Bearer " + json.string();
            }
            case 2 -> {
                kind = "token-prefix";
                auth = "Bearer " + w.token().substring(0, 1 + r.nextInt(w.token().length() - 1));
            }
            case 3 -> {
                kind = "token-plus";
                auth = "Bearer " + w.token() + (char) ('!' + r.nextInt(90));
            }
            case 4 -> {
                kind = "token-case";
                auth = "Bearer " + w.token().toUpperCase(Locale.ROOT);
            }
            case 5 -> {
                kind = "token-as-basic";
                auth = "Basic " + Base64.getEncoder().encodeToString(("agent:" + w.token()).getBytes(StandardCharsets.UTF_8));
            }
            case 6 -> {
                kind = "scheme-only";
                auth = new String[] {"Bearer", "IMEXPROBE-HMAC", "Bearer ", "  ", "Negotiate"}[r.nextInt(5)];
            }
            case 7 -> {
                kind = "hmac-garbage";
                auth = "IMEXPROBE-HMAC " + json.string();
            }
            case 8 -> {
                kind = "hmac-bad-ts";
                String[] ts = {"-1", "abc", "1e9", "99999999999999999999", "", " " + now, "0x10", "١٢٣"};
                auth = "IMEXPROBE-HMAC ts=" + ts[r.nextInt(ts.length)] + ",sig=" + "A".repeat(43);
            }
            case 9 -> {
                kind = "hmac-short-sig";
                auth = "IMEXPROBE-HMAC ts=" + now + ",sig=" + "A".repeat(r.nextInt(43));
            }
            case 10 -> {
                kind = "hmac-extra-param";
                auth = ours.sign(method, path, body) + ",nonce=1";
            }
            case 11 -> {
                kind = "hmac-repeated-param";
                auth = "IMEXPROBE-HMAC ts=" + now + ",ts=" + now;
            }
            case 12 -> {
                kind = "hmac-other-token";
                auth = otherToken.sign(method, path, body);
            }
            case 13 -> {
                kind = "hmac-other-path";
                auth = ours.sign(method, path + "x", body);
            }
            case 14 -> {
                kind = "hmac-other-method";
                auth = ours.sign(method.equals("POST") ? "PUT" : "POST", path, body);
            }
            case 15 -> {
                kind = "hmac-other-body";
                auth = ours.sign(method, path, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
            }
            case 16 -> {
                kind = "hmac-expired";
                auth = new AgentSignature(w.token(), Clock.fixed(Instant.now().minusSeconds(61 + r.nextInt(100_000)),
                        ZoneOffset.UTC)).sign(method, path, body);
            }
            case 17 -> {
                kind = "hmac-future";
                auth = new AgentSignature(w.token(), Clock.fixed(Instant.now().plusSeconds(61 + r.nextInt(100_000)),
                        ZoneOffset.UTC)).sign(method, path, body);
            }
            case 18 -> {
                kind = "hmac-flipped-sig";
                String good = ours.sign(method, path, body);
                int at = good.length() - 1 - r.nextInt(20);
                char c = good.charAt(at);
                auth = good.substring(0, at) + (c == 'A' ? 'B' : 'A') + good.substring(at + 1);
            }
            case 19 -> {
                kind = "huge-header";
                auth = "Bearer " + "A".repeat(4000 + r.nextInt(6000));
            }
            case 20 -> {
                kind = "control-chars";
                auth = "Bearer \u0001\u007f" + json.string();
            }
            default -> {
                // A captured request replayed unchanged within the window: accepted by design (docs/security.md).
                // Sent as an import of a garbage handle, so accepting it costs one refused import.
                byte[] imp = ("{\"handle\":\"" + Base64.getEncoder().encodeToString(json.randomBytes(64))
                        + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":" + GRANULARITY + "}").getBytes(StandardCharsets.UTF_8);
                String signed = ours.sign("POST", "/v1/imports", imp);
                return new Case("credentials/hmac-replayed", RawHttp.Request.of("POST", "/v1/imports")
                        .header("Authorization", signed).json(imp), "POST /v1/imports", true, Set.of(200),
                        Replies.importRefused(), x -> { });
            }
        }
        RawHttp.Request req = RawHttp.Request.of(method, path);
        if (auth != null) {
            req.header("Authorization", auth);
        }
        if (auth != null && r.nextInt(10) == 0) {
            req.header("Authorization", "Bearer " + w.token()); // a second header: the first one counts
        }
        req = body == null ? req : req.json(body);
        // A wrong credential is 401; a header the container will not take (over its size limit, control characters)
        // may be refused by it first, with 400.
        Set<Integer> expect = kind.equals("huge-header") || kind.equals("control-chars") ? Set.of(400, 401)
                : Set.of(401);
        return new Case("credentials/" + kind, req, operation, false, expect, Replies.unauthorized(), x -> { });
    }

    // ---- methods and paths ----------------------------------------------------------------------------------------

    private static final List<String> PATHS = List.of("/v1/imports", "/v1/exports", "/v1/exports/x",
            "/v1/exports/x/verify", "/probe", "/v1/node", "/v1/mesh", "/", "/v1/ladder", "/actuator",
            "/actuator/health", "/actuator/health/liveness", "/actuator/prometheus", "/actuator/info", "/actuator/env",
            "/actuator/heapdump", "/actuator/mappings", "/actuator/beans", "/actuator/threaddump",
            "/actuator/shutdown", "/actuator/loggers", "/actuator/configprops", "/error", "/openapi.yaml");
    private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS",
            "TRACE", "FOO", "get", "PROPFIND", "M-SEARCH");

    private Case pathCase() {
        String path = PATHS.get(r.nextInt(PATHS.size()));
        String method = METHODS.get(r.nextInt(METHODS.size()));
        String odd = mutate(path);
        boolean credentialed = r.nextBoolean();
        RawHttp.Request req = RawHttp.Request.of(method, odd);
        if (credentialed) {
            req.header("Authorization", "Bearer " + w.token());
        }
        if (r.nextBoolean() && !method.equals("GET") && !method.equals("HEAD")) {
            req = req.json(r.nextBoolean() ? "{}".getBytes(StandardCharsets.UTF_8) : json.broken());
        } else if (r.nextInt(8) == 0) {
            req.header("Content-Type", "application/x-www-form-urlencoded");
            req = req.body("a=%zz&b=%ff%fe&c".getBytes(StandardCharsets.US_ASCII));
        }
        Consumer<RawHttp.Reply> check = credentialed ? x -> { } : Replies.nothingDoneWithoutCredentials(method);
        return new Case("paths/" + (odd.equals(path) ? "plain" : "odd"), req, null, credentialed, Set.of(), check,
                x -> { });
    }

    /** One odd spelling of a path: encodings, parameters, dot segments, slashes, case, length. */
    String mutate(String path) {
        int k = r.nextInt(24);
        int cut = path.length() <= 1 ? path.length() : 1 + r.nextInt(path.length() - 1);
        String a = path.substring(0, cut);
        String b = path.substring(cut);
        return switch (k) {
            case 0 -> path;
            case 1 -> path + ";jsessionid=" + json.string().replaceAll("[^a-z0-9]", "");
            case 2 -> a + ";x=1" + b;
            case 3 -> a + "%" + String.format("%02X", (int) path.charAt(cut < path.length() ? cut : 0)) + b.substring(b.isEmpty() ? 0 : 1);
            case 4 -> a + "%zz" + b;
            case 5 -> a + "%" + b;
            case 6 -> a + "%00" + b;
            case 7 -> a + "%2f" + b;
            case 8 -> a + "%5C" + b;
            case 9 -> a + "/" + b;
            case 10 -> "/" + path;
            case 11 -> a + "/./" + b;
            case 12 -> "/v1/node/.." + path;
            case 13 -> "/static/../" + path.substring(1);
            case 14 -> "/%2e%2e" + path;
            case 15 -> path + "/";
            case 16 -> path.toUpperCase(Locale.ROOT);
            case 17 -> a + "%C0%AE" + b;
            case 18 -> a + "é" + b;
            case 19 -> path + "/" + "x".repeat(6000 + r.nextInt(4000));
            case 20 -> path + "?" + "q=" + "%".repeat(r.nextInt(3)) + json.string().replace(' ', '+');
            case 21 -> path + "#frag";
            case 22 -> "http://127.0.0.1:" + w.agentPort() + path;
            default -> "/v1/exports/../imports".equals(path) ? path : a + "/.." + b;
        };
    }

    // ---- helpers --------------------------------------------------------------------------------------------------

    private RawHttp.Request bearerRequest(String method, String path) {
        return RawHttp.Request.of(method, path).header("Authorization", "Bearer " + w.token());
    }

    private Case bearer(String family, String method, String path, byte[] body, Set<Integer> expect, String op) {
        return new Case(family, bearerRequest(method, path).json(body), op, true, expect, x -> { }, x -> { });
    }
}
