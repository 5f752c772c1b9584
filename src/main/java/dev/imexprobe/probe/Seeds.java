package dev.imexprobe.probe;

import java.security.SecureRandom;

/** Pattern seeds: unpredictable, so an importer cannot pass verify by guessing instead of reading. */
public final class Seeds {

    private static final SecureRandom RANDOM = new SecureRandom();

    private Seeds() {
    }

    public static long next() {
        return RANDOM.nextLong();
    }
}
