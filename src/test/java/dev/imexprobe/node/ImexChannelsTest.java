package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImexChannelsTest {

    @TempDir
    Path root;

    long seed;
    Random random;

    @BeforeEach
    void seed() {
        seed = System.nanoTime();
        random = new Random(seed);
    }

    private ImexChannels read() {
        return new NodeInspector(Fixtures.settings(root)).imexChannels();
    }

    private Path channelDir() {
        return root.resolve("dev/nvidia-caps-imex-channels");
    }

    @Test
    void missingDirectoryIsReportedNotThrown() throws Exception {
        int major = 234 + random.nextInt(20);
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(major));

        ImexChannels channels = read();

        assertThat(channels.exists()).isFalse();
        assertThat(channels.directory()).isEqualTo(channelDir().toString());
        assertThat(channels.expectedMajor()).as("seed %d", seed).isEqualTo(major);
        assertThat(channels.channels()).isEmpty();
        assertThat(channels.error()).isNull();
    }

    @Test
    void withoutTheImexLineTheExpectedMajorIsNull() throws Exception {
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(null));
        Files.createDirectories(channelDir());
        assertThat(read().expectedMajor()).isNull();
        assertThat(read().exists()).isTrue();
    }

    @Test
    void missingProcDevicesIsAnErrorButChannelsAreStillRead() throws Exception {
        Fixtures.write(channelDir().resolve("channel0"), "");

        ImexChannels channels = read();

        assertThat(channels.expectedMajor()).isNull();
        assertThat(channels.error()).contains(root.resolve("proc/devices").toString()).contains("does not exist");
        assertThat(channels.channels()).extracting(ImexChannel::name).containsExactly("channel0");
    }

    @Test
    void aFileWhereTheDirectoryShouldBeIsSaid() throws Exception {
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(240));
        Fixtures.write(channelDir(), "not a directory");

        ImexChannels channels = read();

        assertThat(channels.exists()).isFalse();
        assertThat(channels.error()).contains("is not a directory (regular)");
    }

    @Test
    void plainFilesAreListedSortedByNumberWithOtherEntriesIgnored() throws Exception {
        int major = 234 + random.nextInt(20);
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(major));
        TreeSet<Integer> numbers = new TreeSet<>();
        while (numbers.size() < 6) {
            numbers.add(random.nextInt(2048));
        }
        List<Integer> shuffledCreation = new ArrayList<>(numbers);
        Collections.shuffle(shuffledCreation, random);
        for (int n : shuffledCreation) {
            Fixtures.write(channelDir().resolve("channel" + n), "");
        }
        for (String other : List.of("foo", "channel007", "channel", "channelX", "channel-1", ".hidden")) {
            Fixtures.write(channelDir().resolve(other), "");
        }

        ImexChannels channels = read();

        assertThat(channels.exists()).isTrue();
        assertThat(channels.expectedMajor()).isEqualTo(major);
        assertThat(channels.channels()).extracting(ImexChannel::number).as("seed %d", seed)
                .containsExactlyElementsOf(numbers);
        assertThat(channels.channels()).allSatisfy(c -> {
            assertThat(c.name()).isEqualTo("channel" + c.number());
            assertThat(c.charDevice()).isFalse();
            assertThat(c.major()).isNull();
            assertThat(c.minor()).isNull();
            assertThat(c.majorMatches()).isFalse();
            assertThat(c.minorMatches()).isFalse();
            assertThat(c.readable()).isTrue();
            assertThat(c.readError()).isNull();
        });
        assertThat(channels.ignored())
                .containsExactly(".hidden", "channel", "channel-1", "channel007", "channelX", "foo");
        assertThat(channels.error()).isNull();
    }

    @Test
    void aDirectoryNamedLikeAChannelIsNotReadable() throws Exception {
        // Unreadable case 1 of 2 (chmod 000 does not stop root): an entry that is a directory.
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(240));
        int n = random.nextInt(2048);
        Files.createDirectories(channelDir().resolve("channel" + n));

        ImexChannel channel = read().channels().getFirst();

        assertThat(channel.number()).as("seed %d", seed).isEqualTo(n);
        assertThat(channel.readable()).isFalse();
        assertThat(channel.readError()).isEqualTo("is a directory, not a device or file");
    }

    @Test
    void charDevicesWithMatchingNumbersButNoDriverAreNotReadable() throws Exception {
        // Unreadable case 2 of 2: a char device whose major no driver registered; open(2) fails with ENXIO.
        int major = Fixtures.pick(random, Fixtures.unregisteredMajors());
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(major));
        TreeSet<Integer> numbers = new TreeSet<>(List.of(2047)); // a minor above 255 uses the high rdev bits
        while (numbers.size() < 4) {
            numbers.add(random.nextInt(2048));
        }
        for (int n : numbers) {
            Fixtures.mknodOrSkip(channelDir().resolve("channel" + n), major, n);
        }

        ImexChannels channels = read();

        assertThat(channels.channels()).extracting(ImexChannel::number).as("seed %d", seed)
                .containsExactlyElementsOf(numbers);
        assertThat(channels.channels()).allSatisfy(c -> {
            assertThat(c.charDevice()).isTrue();
            assertThat(c.major()).isEqualTo(major);
            assertThat(c.minor()).isEqualTo(c.number());
            assertThat(c.majorMatches()).isTrue();
            assertThat(c.minorMatches()).isTrue();
            assertThat(c.readable()).isFalse();
            assertThat(c.readError()).isEqualTo("No such device or address");
        });
    }

    // ---- observer mode: listed, never opened --------------------------------------------------------------

    private ImexChannels listOnly() {
        return new NodeInspector(Fixtures.settings(root), false).imexChannels();
    }

    @Test
    void observerModeListsAndStatsChannelsWithoutOpeningAny() throws Exception {
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(240));
        Files.createDirectories(channelDir());
        for (int n : List.of(0, 5, 17)) {
            Files.writeString(channelDir().resolve("channel" + n), "");
        }

        long before = DeviceFile.OPENS.sum();
        ImexChannels listed = listOnly();
        long opensWhileListing = DeviceFile.OPENS.sum() - before;
        ImexChannels opened = read();
        long opensWhenOpening = DeviceFile.OPENS.sum() - before - opensWhileListing;

        assertThat(opensWhileListing).as("open(2) calls in observer mode").isZero();
        assertThat(opensWhenOpening).as("the counter sees the other mode's opens: the check can fail").isEqualTo(3);
        assertThat(listed.opened()).isFalse();
        assertThat(opened.opened()).isTrue();
        assertThat(listed.channels()).extracting(ImexChannel::name).containsExactly("channel0", "channel5", "channel17");
        assertThat(listed.channels()).allSatisfy(c -> assertThat(c.readable()).as("access(2) R_OK").isTrue());
    }

    @Test
    void observerModeNeverOpensADeviceWhoseOpenWouldFail() throws Exception {
        // A char device of a major no driver registered: open(2) fails with ENXIO, access(2) does not. Listing it
        // in observer mode must not show ENXIO: that error would prove an open.
        int major = Fixtures.pick(random, Fixtures.unregisteredMajors());
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(major));
        Fixtures.mknodOrSkip(channelDir().resolve("channel0"), major, 0);

        ImexChannel listed = listOnly().channels().getFirst();
        ImexChannel opened = read().channels().getFirst();

        assertThat(listed.charDevice()).isTrue();
        assertThat(listed.majorMatches()).isTrue();
        assertThat(listed.readError()).as("seed %d", seed).isNull();
        assertThat(listed.readable()).isTrue();
        assertThat(opened.readError()).isEqualTo("No such device or address");
    }

    @Test
    void majorMismatchIsReportedAndTheNodeStillOpens() throws Exception {
        // channel3 made as /dev/null (1:3): right minor, wrong major, and readable because mem's driver opens it.
        int expected = Fixtures.pick(random, Fixtures.unregisteredMajors());
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(expected));
        Fixtures.mknodOrSkip(channelDir().resolve("channel3"), 1, 3);

        ImexChannel channel = read().channels().getFirst();

        assertThat(channel.charDevice()).isTrue();
        assertThat(channel.major()).isEqualTo(1);
        assertThat(channel.majorMatches()).as("expected major %d", expected).isFalse();
        assertThat(channel.minorMatches()).isTrue();
        assertThat(channel.readable()).isTrue();
        assertThat(channel.readError()).isNull();
    }

    @Test
    void minorMismatchIsReported() throws Exception {
        // channel3 with minor 5: here made as 1:5 (/dev/zero) with the fixture saying the IMEX major is 1.
        Fixtures.write(root.resolve("proc/devices"), "Character devices:\n  1 nvidia-caps-imex-channels\n");
        Fixtures.mknodOrSkip(channelDir().resolve("channel3"), 1, 5);

        ImexChannel channel = read().channels().getFirst();

        assertThat(channel.name()).isEqualTo("channel3");
        assertThat(channel.minor()).isEqualTo(5);
        assertThat(channel.majorMatches()).isTrue();
        assertThat(channel.minorMatches()).isFalse();
        assertThat(channel.readable()).isTrue();
    }

    @Test
    void expectedMajorUnknownMeansNoMajorMatch() throws Exception {
        Fixtures.write(root.resolve("proc/devices"), Fixtures.procDevices(null));
        Fixtures.mknodOrSkip(channelDir().resolve("channel0"), 1, 0);

        ImexChannel channel = read().channels().getFirst();

        assertThat(channel.charDevice()).isTrue();
        assertThat(channel.majorMatches()).isFalse();
        assertThat(channel.minorMatches()).isTrue();
    }
}
