package dev.imexprobe.ship;

import java.util.List;

class AlertRulesTest {
    static final List<String> ALERTS = List.of("ImexprobePairImportFailing", "ImexprobeTargetUnreachable",
            "ImexprobeAgentDown", "ImexprobeProbesStale", "ImexprobeNoImexChannel");
}
