package dev.imexprobe.web;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The answer buffer a request thread keeps between answers: each answer whole and alone, large ones not kept. */
class DirectRoutesAnswerTest {

    @Test
    void everyAnswerIsExactlyItsOwnBytesWhateverCameBefore() throws IOException {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        DirectRoutes.Answer answer = new DirectRoutes.Answer();
        for (int i = 0; i < 200; i++) {
            // mostly small answers, now and then one past what is kept (a large report)
            byte[] body = new byte[random.nextInt(8) == 0 ? random.nextInt(64 * 1024) : random.nextInt(3000)];
            random.nextBytes(body);
            answer.write(body, 0, body.length);

            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            answer.writeTo(sent);
            assertThat(answer.size()).as("seed %d", seed).isEqualTo(body.length);
            assertThat(sent.toByteArray()).as("seed %d", seed).isEqualTo(body);

            answer.trim();
            assertThat(answer.size()).isZero();
            assertThat(answer.kept()).as("a grown buffer is let go").isLessThanOrEqualTo(DirectRoutes.Answer.KEPT);
        }
    }
}
