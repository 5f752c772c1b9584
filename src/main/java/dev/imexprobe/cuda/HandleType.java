package dev.imexprobe.cuda;

import java.util.Collection;
import java.util.Locale;

/** The shareable handle types we probe (CUmemAllocationHandleType). */
public enum HandleType {
    /** A file descriptor; travels between processes of one host only (SCM_RIGHTS). */
    POSIX_FD(0x1),
    /** A 64-byte fabric handle; travels anywhere, resolved by the driver through the IMEX channel. */
    FABRIC(0x8);

    private final int flag;

    HandleType(int flag) {
        this.flag = flag;
    }

    public int flag() {
        return flag;
    }

    public static int mask(Collection<HandleType> types) {
        int mask = 0;
        for (HandleType t : types) {
            mask |= t.flag;
        }
        return mask;
    }

    /** Parses a user's handle type; null when it is not one we know. */
    public static HandleType parse(String text) {
        if (text == null) {
            return null;
        }
        return switch (text.trim().toUpperCase(Locale.ROOT)) {
            case "FABRIC" -> FABRIC;
            case "POSIX_FD", "POSIX_FILE_DESCRIPTOR" -> POSIX_FD;
            default -> null;
        };
    }
}
