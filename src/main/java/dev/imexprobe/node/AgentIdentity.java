package dev.imexprobe.node;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Who this agent is: a random id per process (so a restarted agent is a new peer), the node name it runs on,
 * and the build's version.
 */
public record AgentIdentity(String id, String node, String version) {

    public static AgentIdentity create(String configuredNode) {
        byte[] b = new byte[8];
        new SecureRandom().nextBytes(b);
        return new AgentIdentity(HexFormat.of().formatHex(b), configuredNode != null && !configuredNode.isBlank()
                ? configuredNode : hostname(), buildVersion());
    }

    public static String buildVersion() {
        String v = AgentIdentity.class.getPackage().getImplementationVersion();
        return v != null ? v : "dev";
    }

    static String hostname() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown";
        }
    }
}
