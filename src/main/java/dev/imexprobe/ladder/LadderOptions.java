package dev.imexprobe.ladder;

import java.time.Duration;

/**
 * What a ladder run may be told: which GPUs (ordinals as the driver numbers them with every GPU visible), the
 * allocation size, how long to wait for any one answer of a worker, and the time budget of the whole run (the
 * agent bounds POST /v1/ladder with it; rungs that would start after it are skipped, said so).
 *
 * @param exporterGpu   GPU A, the exporter's; null = 0
 * @param importerGpu   GPU B, the importer's on rungs 2–4; null = the first GPU other than A, unless A was
 *                      named alone (then rungs 2–4 are skipped: the caller asked for one GPU)
 * @param sizeBytes     bytes per allocation; null = GPU A's granularity
 * @param answerTimeout the longest the ladder waits for one worker answer (its start included)
 * @param budget        the longest the whole ladder may take
 */
public record LadderOptions(Integer exporterGpu, Integer importerGpu, Long sizeBytes, Duration answerTimeout,
                            Duration budget) {

    public static final Duration DEFAULT_ANSWER_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_BUDGET = Duration.ofMinutes(10);

    public LadderOptions {
        if (exporterGpu != null && exporterGpu < 0 || importerGpu != null && importerGpu < 0) {
            throw new IllegalArgumentException("GPU indices must be 0 or more");
        }
        if (exporterGpu != null && exporterGpu.equals(importerGpu)) {
            throw new IllegalArgumentException("--gpus needs two different GPUs, got " + exporterGpu + " twice");
        }
        if (sizeBytes != null && sizeBytes <= 0) {
            throw new IllegalArgumentException("size must be a positive number of bytes, got " + sizeBytes);
        }
        answerTimeout = answerTimeout != null ? answerTimeout : DEFAULT_ANSWER_TIMEOUT;
        budget = budget != null ? budget : DEFAULT_BUDGET;
        if (answerTimeout.compareTo(Duration.ofSeconds(1)) < 0 || budget.compareTo(answerTimeout) < 0) {
            throw new IllegalArgumentException("the answer timeout must be at least 1 s and the budget at least the "
                    + "timeout (timeout " + answerTimeout.toSeconds() + " s, budget " + budget.toSeconds() + " s)");
        }
    }

    public static LadderOptions defaults() {
        return new LadderOptions(null, null, null, null, null);
    }

    /** "A,B" or "A" (then rungs 2–4 are skipped), as --gpus and the REST field take it. */
    public static Integer[] parseGpus(String text) {
        String[] parts = text.trim().split("\\s*,\\s*", -1);
        if (parts.length < 1 || parts.length > 2) {
            throw new IllegalArgumentException("gpus must be A,B (exporter, importer) or A, got '" + text + "'");
        }
        Integer[] out = new Integer[2];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Integer.parseInt(parts[i]);
                if (out[i] < 0) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("gpus must be GPU indices such as 0,1, got '" + text + "'");
            }
        }
        return out;
    }

    /** True when the caller named only GPU A: the two-GPU rungs are not wanted. */
    boolean oneGpuOnly() {
        return exporterGpu != null && importerGpu == null;
    }
}
