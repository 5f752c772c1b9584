package dev.imexprobe.node;

/**
 * One {@code channelN} entry of the IMEX channel directory, as facts only. Whether a plain file counts as a channel
 * (it does on the fake driver, never on the real one) is the caller's decision.
 *
 * @param name          the entry's name, e.g. {@code channel0}
 * @param number        N
 * @param charDevice    a character device (the real driver needs one; the fake accepts a plain file)
 * @param major         device major, null unless a character device
 * @param minor         device minor, null unless a character device
 * @param majorMatches  major equals the {@code nvidia-caps-imex-channels} major from /proc/devices
 * @param minorMatches  minor equals N, as nvidia-modprobe and the documented mknod recipe create them; a mismatch
 *                      means the name and the device disagree about which channel this is
 * @param readable      open(O_RDONLY) succeeded just now
 * @param readError     why open failed (errno text), null when readable
 */
public record ImexChannel(
        String name,
        int number,
        boolean charDevice,
        Integer major,
        Integer minor,
        boolean majorMatches,
        boolean minorMatches,
        boolean readable,
        String readError) {
}
