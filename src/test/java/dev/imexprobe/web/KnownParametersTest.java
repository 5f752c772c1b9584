package dev.imexprobe.web;

import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KnownParametersTest {

    /** DirectRoutes reads /probe's parameters by ProbeController.PARAMETERS: it must be the handler's own list. */
    @Test
    void probesListIsItsHandlersRequestParams() {
        Method probe = Arrays.stream(ProbeController.class.getMethods()).filter(m -> m.getName().equals("probe"))
                .findFirst().orElseThrow();
        assertThat(KnownParameters.names(probe)).isEqualTo(ProbeController.PARAMETERS);
    }

    @Test
    void aRouteTakesItsOwnParametersAndRefusesAnyOther() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<String> known = ProbeController.PARAMETERS;
        for (int i = 0; i < 300; i++) {
            MockHttpServletRequest r = new MockHttpServletRequest("GET", "/probe");
            r.setServletPath("/probe");
            for (String k : known) {
                if (random.nextBoolean()) {
                    r.addParameter(k, "v" + random.nextInt(100));
                }
            }
            assertThatCode(() -> KnownParameters.check(r, known)).as("seed %d", seed).doesNotThrowAnyException();

            String k = known.get(random.nextInt(known.size()));
            String other = random.nextBoolean() ? randomCase(k, random) : k + (char) ('a' + random.nextInt(26));
            r.addParameter(other, "x");
            String meant = other.equalsIgnoreCase(k) ? " (names are case-sensitive: did you mean '" + k + "'?)" : "";
            assertThatThrownBy(() -> KnownParameters.check(r, known)).as("seed %d, %s", seed, other)
                    .isInstanceOf(ApiException.class)
                    .hasMessage("unknown query parameter '" + other + "'" + meant + "; /probe takes "
                            + String.join(", ", known) + ". Nothing was run.");
        }
    }

    /** k with at least one letter's case changed. */
    private static String randomCase(String k, Random random) {
        char[] c = k.toCharArray();
        int flip = random.nextInt(c.length);
        c[flip] = Character.isUpperCase(c[flip]) ? Character.toLowerCase(c[flip]) : Character.toUpperCase(c[flip]);
        for (int i = 0; i < c.length; i++) {
            if (i != flip && random.nextInt(4) == 0) {
                c[i] = random.nextBoolean() ? Character.toUpperCase(c[i]) : Character.toLowerCase(c[i]);
            }
        }
        return new String(c).equals(k) ? k.toUpperCase(Locale.ROOT) : new String(c);
    }
}
