package dev.imexprobe.node;

/**
 * One nvidia device node under /dev (or the IMEX channel directory itself).
 *
 * @param name       the entry name, e.g. {@code nvidia0}
 * @param path       the full path inspected
 * @param exists     it exists (symlinks followed)
 * @param charDevice it is a character device
 * @param directory  it is a directory (only expected of {@code nvidia-caps-imex-channels})
 * @param major      device major, null unless a character device
 * @param minor      device minor, null unless a character device
 * @param openable   open(O_RDONLY) succeeded just now (for a directory: it could be listed); nothing is written
 * @param openError  why it could not be opened, null when it could
 */
public record DeviceNode(
        String name,
        String path,
        boolean exists,
        boolean charDevice,
        boolean directory,
        Integer major,
        Integer minor,
        boolean openable,
        String openError) {
}
