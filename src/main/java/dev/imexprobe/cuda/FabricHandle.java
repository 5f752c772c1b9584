package dev.imexprobe.cuda;

import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/** The 64 opaque bytes of a CUmemFabricHandle. Validated on construction; copied in and out. */
public final class FabricHandle {

    public static final int SIZE = 64;

    private final byte[] bytes;

    private FabricHandle(byte[] bytes) {
        this.bytes = bytes;
    }

    public static FabricHandle of(byte[] bytes) {
        if (bytes == null || bytes.length != SIZE) {
            throw new IllegalArgumentException("a FABRIC handle is exactly " + SIZE + " bytes, got "
                    + (bytes == null ? "none" : bytes.length));
        }
        return new FabricHandle(bytes.clone());
    }

    /** Decodes standard or URL-safe base64 (padding optional); throws IllegalArgumentException with the reason. */
    public static FabricHandle fromBase64(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("handle is missing: send the 64-byte FABRIC handle as base64");
        }
        String t = text.trim();
        byte[] decoded;
        try {
            decoded = t.indexOf('-') >= 0 || t.indexOf('_') >= 0
                    ? Base64.getUrlDecoder().decode(t) : Base64.getDecoder().decode(t);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handle is not valid base64: " + e.getMessage());
        }
        return of(decoded);
    }

    public byte[] bytes() {
        return bytes.clone();
    }

    public String base64() {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** A short, non-reversible tag for logs: never log a whole handle, it is a capability. */
    public String fingerprint() {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
            return HexFormat.of().formatHex(d, 0, 6);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FabricHandle other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "FabricHandle[" + fingerprint() + "]";
    }
}
