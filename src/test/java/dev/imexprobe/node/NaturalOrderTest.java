package dev.imexprobe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class NaturalOrderTest {

    @Test
    void ordersDigitRunsByValue() {
        List<String> expected = List.of("nvidia-caps-imex-channels", "nvidia-uvm", "nvidia0", "nvidia1", "nvidia2",
                "nvidia10", "nvidia99999999999999999999", "nvidiactl");
        long seed = System.nanoTime();
        List<String> shuffled = new ArrayList<>(expected);
        Collections.shuffle(shuffled, new Random(seed));
        shuffled.sort(NaturalOrder.INSTANCE);
        assertThat(shuffled).as("seed %d", seed).containsExactlyElementsOf(expected);
    }

    @Test
    void isConsistentForEqualValuesSpelledDifferently() {
        assertThat(NaturalOrder.INSTANCE.compare("n007", "n7")).isNotZero();
        assertThat(Integer.signum(NaturalOrder.INSTANCE.compare("n007", "n7")))
                .isEqualTo(-Integer.signum(NaturalOrder.INSTANCE.compare("n7", "n007")));
        assertThat(NaturalOrder.INSTANCE.compare("a", "a")).isZero();
    }
}
