package dev.imexprobe.node;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One stat(2) of a path as the CUDA driver would see it: file type and, for a character device, its device number.
 * Package-private: callers get the facts through the public records.
 */
record DeviceFile(Path path, Type type, Integer major, Integer minor, String statError) {

    enum Type { MISSING, CHAR_DEVICE, BLOCK_DEVICE, REGULAR, DIRECTORY, FIFO, SOCKET, OTHER }

    // st_mode file-type bits, from <sys/stat.h>.
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFIFO = 0010000;

    /** Follows symlinks, as open(2) in the driver does. Never throws. */
    static DeviceFile stat(Path path) {
        try {
            int mode = (Integer) Files.getAttribute(path, "unix:mode");
            Type type = switch (mode & S_IFMT) {
                case S_IFCHR -> Type.CHAR_DEVICE;
                case S_IFBLK -> Type.BLOCK_DEVICE;
                case S_IFREG -> Type.REGULAR;
                case S_IFDIR -> Type.DIRECTORY;
                case S_IFIFO -> Type.FIFO;
                case S_IFSOCK -> Type.SOCKET;
                default -> Type.OTHER;
            };
            if (type == Type.CHAR_DEVICE || type == Type.BLOCK_DEVICE) {
                long rdev = (Long) Files.getAttribute(path, "unix:rdev");
                return new DeviceFile(path, type, major(rdev), minor(rdev), null);
            }
            return new DeviceFile(path, type, null, null, null);
        } catch (NoSuchFileException e) {
            // A dangling symlink lands here too; say which, it changes the remedy.
            String why = Files.isSymbolicLink(path) ? "dangling symlink to " + readLink(path) : null;
            return new DeviceFile(path, Type.MISSING, null, null, why);
        } catch (IOException | UnsupportedOperationException | ClassCastException | SecurityException e) {
            return new DeviceFile(path, Type.OTHER, null, null, "cannot stat " + path + ": " + describe(e));
        }
    }

    /** glibc's gnu_dev_major: 12 bits at 8..19, the rest from bit 44 up. */
    static int major(long rdev) {
        return (int) (((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL));
    }

    /** glibc's gnu_dev_minor: 8 low bits, the rest from bit 20 up. */
    static int minor(long rdev) {
        return (int) ((rdev & 0xff) | ((rdev >>> 12) & ~0xffL));
    }

    /** glibc's gnu_dev_makedev, the inverse of {@link #major}/{@link #minor}; used by tests. */
    static long makedev(long major, long minor) {
        return ((major & 0xfff) << 8) | ((major & ~0xfffL) << 32) | (minor & 0xff) | ((minor & ~0xffL) << 12);
    }

    boolean exists() {
        return type != Type.MISSING;
    }

    boolean charDevice() {
        return type == Type.CHAR_DEVICE;
    }

    /**
     * Opens the path read-only, as the driver does with a channel, and closes it at once; nothing is read or written.
     * Returns {@code null} on success, otherwise why it failed. Only regular files and character devices are opened:
     * opening a FIFO for read blocks until a writer appears, and a directory is never what the driver wants.
     */
    /** open(2) calls made by {@link #openForReadError()}: observer mode must make none on channels (a test reads it). */
    static final java.util.concurrent.atomic.LongAdder OPENS = new java.util.concurrent.atomic.LongAdder();

    /**
     * As {@link #openForReadError()} without opening: access(2) R_OK on a device or file (permission bits only; the
     * device cgroup is not asked). For observer mode, which lists channel devices and never opens them.
     */
    String accessForReadError() {
        return switch (type) {
            case CHAR_DEVICE, REGULAR -> Files.isReadable(path) ? null
                    : "no read permission (access(2); not opened: observer mode lists channels only)";
            default -> openForReadError();
        };
    }

    String openForReadError() {
        return switch (type) {
            case MISSING -> statError != null ? statError : "does not exist";
            case DIRECTORY -> "is a directory, not a device or file";
            case FIFO, SOCKET, BLOCK_DEVICE, OTHER ->
                    statError != null ? statError : "is a " + type.name().toLowerCase().replace('_', ' ')
                            + ", not opened";
            case CHAR_DEVICE, REGULAR -> {
                OPENS.increment();
                try (FileChannel ignored = FileChannel.open(path, StandardOpenOption.READ)) {
                    yield null;
                } catch (IOException | SecurityException e) {
                    yield describe(e);
                }
            }
        };
    }

    /** The errno text without the path Java repeats in front of it. */
    static String describe(Exception e) {
        if (e instanceof DirectoryIteratorException die) {
            return describe(die.getCause());
        }
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return fse.getReason();
        }
        if (e instanceof NoSuchFileException) {
            return "No such file or directory";
        }
        if (e instanceof AccessDeniedException) {
            return "Permission denied";
        }
        String message = e.getMessage();
        return message == null ? e.getClass().getSimpleName() : message;
    }

    private static String readLink(Path path) {
        try {
            return Files.readSymbolicLink(path).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return "?";
        }
    }
}
