package dev.imexprobe.web;

import dev.imexprobe.node.NodeReport;
import dev.imexprobe.node.NodeService;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** GET /v1/node: this node's report (read-only, no authentication: it holds no secret). */
@RestController
public class NodeController {

    private final NodeService node;

    public NodeController(NodeService node) {
        this.node = node;
    }

    /** {@code refresh=true} inspects again instead of answering from the last interval's report. */
    @GetMapping(path = "/v1/node", produces = MediaType.APPLICATION_JSON_VALUE)
    public NodeReport node(@RequestParam(defaultValue = "false") boolean refresh) {
        return refresh ? node.refresh() : node.report();
    }
}
