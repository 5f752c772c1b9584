package dev.imexprobe.node;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The "Character devices:" section of /proc/devices: driver name → major. The IMEX channel major is allocated
 * dynamically when nvidia.ko loads, so this file is the only place to learn what a channel node's major must be.
 */
record ProcDevices(Map<String, Integer> characterMajors) {

    static final String IMEX_CHANNELS = "nvidia-caps-imex-channels";

    ProcDevices {
        characterMajors = Map.copyOf(characterMajors);
    }

    static ProcDevices parse(String text) {
        Map<String, Integer> majors = new LinkedHashMap<>();
        boolean inCharacter = false;
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.endsWith(":")) {
                inCharacter = line.equals("Character devices:");
                continue;
            }
            if (!inCharacter || line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\\s+", 2);
            if (parts.length == 2) {
                try {
                    // The first name listed for a major wins, as with "4 /dev/vc/0" then "4 tty".
                    majors.putIfAbsent(parts[1], Integer.parseInt(parts[0]));
                } catch (NumberFormatException ignored) {
                    // A garbled line says nothing about the others.
                }
            }
        }
        return new ProcDevices(majors);
    }

    Integer characterMajor(String driver) {
        return characterMajors.get(driver);
    }
}
