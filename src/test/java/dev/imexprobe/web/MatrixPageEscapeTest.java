package dev.imexprobe.web;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The matrix page escapes what peers report (node names, causes) with Spring's HtmlUtils. */
class MatrixPageEscapeTest {

    @Test
    void theFiveSpecialCharactersAreEscapedAndNothingElse() {
        assertThat(MeshController.MatrixPage.esc("<img src=x onerror='a(\"b\")'>&"))
                .isEqualTo("&lt;img src=x onerror=&#39;a(&quot;b&quot;)&#39;&gt;&amp;");
        assertThat(MeshController.MatrixPage.esc("node-é → GPU ±1")).isEqualTo("node-é → GPU ±1");
        assertThat(MeshController.MatrixPage.esc(null)).isEmpty();
    }
}
