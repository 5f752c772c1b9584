package dev.imexprobe.finding;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The findings catalogue: every diagnosis imexprobe can make, with its severity, default blame, cause and
 * remedy. This enum is the one place they are written; docs/findings.md is checked against it by a test.
 * {@code {name}} in a text is replaced by the evidence value of that name.
 */
public enum FindingCode {

    // ---- local evidence: the node itself ------------------------------------------------------------------
    NO_DRIVER(Severity.ERROR, Blame.LOCAL,
            "No usable NVIDIA driver library: {reason}.",
            "Run on a GPU node inside a container started by the NVIDIA container runtime (or with the driver "
                    + "libraries mounted), or point IMEXPROBE_CUDA_LIBRARY at libcuda.so.1."),
    NO_GPU(Severity.ERROR, Blame.LOCAL,
            "The driver loaded but this process sees no GPU (cuInit: {driverResult}; CUDA_VISIBLE_DEVICES={visibleDevices}).",
            "Request a GPU for the pod (nvidia.com/gpu or a DRA ResourceClaim) and check CUDA_VISIBLE_DEVICES "
                    + "and the /dev/nvidia* device nodes the container was given."),
    VMM_UNSUPPORTED(Severity.ERROR, Blame.LOCAL,
            "GPU {gpu} ({uuid}) reports VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED=0: it has no cuMemCreate/cuMemMap, so "
                    + "no pair with it can work. imexprobe creates no context on it and its pairs are not probed.",
            "Fabric memory needs VMM: use a supported GPU and a driver of CUDA 11.3 or later. Where this GPU is "
                    + "not meant for fabric memory, keep the agent off its nodes (the chart's nodeSelector)."),
    FABRIC_UNSUPPORTED(Severity.ERROR, Blame.LOCAL,
            "GPU {gpu} ({uuid}) reports HANDLE_TYPE_FABRIC_SUPPORTED=0: it can neither export nor import fabric "
                    + "handles, so no pair with it can work. imexprobe creates no context on it and its pairs are not "
                    + "probed.",
            "FABRIC handles need a Hopper or newer GPU with a driver of CUDA 12.3 or later; on older systems "
                    + "use POSIX_FD handles within one node. Where this GPU is not meant for fabric memory, keep the "
                    + "agent off its nodes (the chart's nodeSelector)."),
    OBSERVER_MODE(Severity.INFO, Blame.LOCAL,
            "This agent observes only (imexprobe.channel.mode=observer): it holds no IMEX channel by configuration, "
                    + "creates no context and allocates nothing, and probes no pair. It reports the node's GPUs, "
                    + "fabric state and channel devices.",
            "To prove exports and imports, give the agent a channel: imex.channel.mode=hostPath where the host "
                    + "manages IMEX, or computeDomain on canary nodes (it takes that node's ComputeDomain)."),
    COMPUTE_MODE_EXCLUSIVE_PROCESS(Severity.INFO, Blame.LOCAL,
            "GPU {gpu} ({uuid}) is in compute mode EXCLUSIVE_PROCESS: one process's context at a time. A context "
                    + "the agent held there would keep a job's own context out (CUDA_ERROR_DEVICE_UNAVAILABLE, 46), "
                    + "so the agent creates none on it and its pairs are not probed.",
            "Nothing to fix if the GPU is meant for one job at a time. To probe it, set it back to DEFAULT "
                    + "(nvidia-smi -i {uuid} -c DEFAULT, as root) or, only where this GPU is kept idle for the agent, "
                    + "opt in with imexprobe.driver.probe-exclusive-process=true (chart: "
                    + "agent.driver.probeExclusiveProcess)."),
    COMPUTE_MODE_PROHIBITED(Severity.INFO, Blame.LOCAL,
            "GPU {gpu} ({uuid}) is in compute mode PROHIBITED: no process may create a context on it (cuda.h: "
                    + "retaining its primary context fails), so the agent does not try and its pairs are not probed.",
            "Nothing to fix if the GPU is fenced off on purpose. To probe it, set it to DEFAULT (nvidia-smi -i "
                    + "{uuid} -c DEFAULT, as root); imexprobe.driver.probe-exclusive-process does not apply to this mode."),
    MIG_ENABLED(Severity.INFO, Blame.LOCAL,
            "GPU {gpu} ({uuid}) has MIG enabled: CUDA runs on its MIG instances, not on the whole GPU, and the agent "
                    + "does not probe MIG instances, so it creates no context on it and its pairs are not probed.",
            "Nothing to fix if the GPU is partitioned for jobs. To probe it, disable MIG while no job uses it "
                    + "(nvidia-smi -i {uuid} -mig 0, then reset the GPU); imexprobe.driver.probe-exclusive-process "
                    + "does not apply to MIG."),
    GPU_MEMORY_IN_USE(Severity.INFO, Blame.LOCAL,
            "GPU {gpu} ({uuid}) has {freeMiB} MiB of its {totalMiB} MiB free, less than the {minFreeMiB} MiB the agent "
                    + "leaves to jobs (imexprobe.driver.min-free-memory): a context of its own would take about 520 "
                    + "MiB of what a job may allocate next, so it creates none now and the pair is not probed.",
            "Nothing to fix: a job is using the GPU's memory, and the agent probes the GPU again once that much is "
                    + "free. To probe busy GPUs anyway, lower imexprobe.driver.min-free-memory "
                    + "(IMEXPROBE_DRIVER_MINFREEMEMORY, which check reads too; chart: agent.driver.minFreeMemory; 0 "
                    + "turns the check off)."),
    NO_IMEX_CHANNEL(Severity.ERROR, Blame.LOCAL,
            "No IMEX channel is usable in {channelDir}: {channelState}. cuMemCreate(FABRIC) returns 800 "
                    + "NOT_PERMITTED without one (measured on an H200).",
            "Give the pod a channel: a ComputeDomain ResourceClaim (DRA driver) or, on a plain host, as root: "
                    + "mkdir -p /dev/nvidia-caps-imex-channels && mknod -m 666 "
                    + "/dev/nvidia-caps-imex-channels/channel0 c $(awk '$2==\"nvidia-caps-imex-channels\"{print $1}' "
                    + "/proc/devices) 0"),
    CHANNEL_MAJOR_MISMATCH(Severity.ERROR, Blame.LOCAL,
            "{channel} is a character device with major {major}, but the driver's nvidia-caps-imex-channels "
                    + "major is {expectedMajor}: it is a stale node (the module was reloaded) and opens nothing.",
            "Re-create the node with the current major from /proc/devices, or restart the pod so the DRA driver "
                    + "injects a fresh one."),
    CHANNEL_MINOR_MISMATCH(Severity.WARNING, Blame.LOCAL,
            "{channel} has minor {minor}: it grants channel {minor}, not the channel its name says.",
            "Name channel nodes after their minor number; exporter and importer must hold the same channel."),
    CHANNEL_UNREADABLE(Severity.ERROR, Blame.LOCAL,
            "{channel} exists but cannot be opened ({error}).",
            "Give the container read access to the channel node (device cgroup rule or the DRA claim) and check "
                    + "its permissions."),
    IMEX_DAEMON_NOT_READY(Severity.ERROR, Blame.LOCAL,
            "The IMEX daemon on this node is configured but not ready (nvidia-imex-ctl -q: {query}). Imports "
                    + "from other nodes fail until it is.",
            "Check the nvidia-imex service (journalctl -u nvidia-imex), its node list and that every peer's "
                    + "daemon is reachable on its port; with ComputeDomains, check the ComputeDomain's status."),
    IMEX_DAEMON_TIMEOUT(Severity.WARNING, Blame.LOCAL,
            "nvidia-imex-ctl did not answer within {timeoutMillis} ms.",
            "The daemon or its control socket is hung: restart nvidia-imex and look at its log."),
    IMEX_DAEMON_ABSENT(Severity.INFO, Blame.LOCAL,
            "No IMEX daemon on this node. Exports and imports within one node work without it (measured on an "
                    + "H200); imports from other nodes need it.",
            "Nothing to do for single-node use. For a multi-node NVLink domain, install the IMEX daemon or use "
                    + "the DRA driver's ComputeDomains."),
    FABRIC_NOT_SUPPORTED(Severity.INFO, Blame.LOCAL,
            "NVML reports fabric state NOT_SUPPORTED for GPU {gpu}: no NVLink fabric (multi-node NVLink) here. "
                    + "Single-node FABRIC handles still work (measured on an H200).",
            "Nothing to do for single-node use; multi-node NVLink needs an NVSwitch-connected system (GB200/GH200 "
                    + "NVL) with the fabric manager."),
    FABRIC_NOT_COMPLETED(Severity.ERROR, Blame.LOCAL,
            "GPU {gpu} has not finished joining its NVLink fabric (state {state}).",
            "Check the fabric manager / NVLink subnet manager and nvidia-smi -q (Fabric section); imports across "
                    + "the NVLink domain fail until the state is COMPLETED."),
    FABRIC_STATE_STUCK(Severity.ERROR, Blame.LOCAL,
            "GPU {gpu} has shown fabric state {state} for {seconds} s (more than {stuckAfterSeconds} s): it is stuck "
                    + "joining its NVLink fabric, not passing through. Imports across the NVLink domain fail while it "
                    + "is (the fault NVSentinel calls FM_REGISTRATION_STUCK).",
            "Check the fabric manager (systemctl status nvidia-fabricmanager, its log) and nvidia-smi -q (Fabric "
                    + "section); restart the fabric manager, and if the GPU stays IN_PROGRESS, drain the node and "
                    + "reset the GPU. imexprobe.node.fabric-stuck-after sets the grace period."),
    FABRIC_UNHEALTHY(Severity.ERROR, Blame.LOCAL,
            "GPU {gpu} joined the fabric but reports a problem ({flags}): status {status}, health {health}, summary "
                    + "{summary}.",
            "Look at nvidia-smi -q (Fabric section) and the fabric manager's log; a GPU with an unhealthy route "
                    + "or wrong configuration must be fixed or drained."),
    FABRIC_DEGRADED(Severity.WARNING, Blame.LOCAL,
            "GPU {gpu}'s fabric works, degraded ({flags}): reduced bandwidth, limited capacity or routes being "
                    + "recovered (health {health}, summary {summary}).",
            "Expect slower transfers (NCCL falls back or slows down on such GPUs); check NVLink errors (nvidia-smi "
                    + "nvlink -e) and the fabric manager log, and plan maintenance if it does not clear."),
    NVML_UNAVAILABLE(Severity.WARNING, Blame.LOCAL,
            "NVML could not be used ({reason}), so fabric state and health are unknown.",
            "Mount libnvidia-ml.so.1 into the container (the NVIDIA runtime does) or set IMEXPROBE_NVML_LIBRARY."),
    SIMULATED(Severity.INFO, Blame.LOCAL,
            "This agent runs on the fake driver ({library}): every result is simulated.",
            "Run on a GPU node for real results."),

    // ---- probe evidence: an exchange between an exporter (source) and an importer (target) ------------------
    CREATE_NOT_PERMITTED(Severity.ERROR, Blame.SOURCE,
            "cuMemCreate(FABRIC) on the exporter returned 800 NOT_PERMITTED: the exporter has no IMEX channel.",
            "Give the exporting pod an IMEX channel (see NO_IMEX_CHANNEL)."),
    IMPORT_NOT_PERMITTED(Severity.ERROR, Blame.TARGET,
            "cuMemImportFromShareableHandle returned 800 NOT_PERMITTED: the importer lacks the IMEX channel the "
                    + "exporter's handle is bound to (an export binds to the exporter's lowest-numbered channel; "
                    + "measured on an H200), or has no channel at all.",
            "Give both pods the same channel (one ComputeDomain; on one node the pods must share the claim), and "
                    + "make sure the exporter does not hold a lower-numbered channel the importer lacks."),
    DIFFERENT_IMEX_DOMAIN(Severity.INFO, Blame.TARGET,
            "The exporter's GPU ({sourceDomain}) and the importer's ({targetDomain}) are in different IMEX domains: "
                    + "FABRIC handles do not import across them by design (an HGX node's GPUs only within the node, "
                    + "an NVLink domain's within its cluster and clique). The mesh does not probe such pairs; an "
                    + "on-demand probe that fails there reports this instead of an error.",
            "Nothing to fix if the two are meant to be apart. If they should share a domain, check both nodes' "
                    + "NVML fabric state, cluster UUID and clique (/v1/node, imexprobe_fabric_state), and that they "
                    + "are in one ComputeDomain."),
    OBSERVER_TARGET(Severity.INFO, Blame.TARGET,
            "The importer's agent on {targetNode} observes only (imexprobe.channel.mode=observer): it holds no IMEX "
                    + "channel by configuration, so the mesh does not probe pairs into it. Not a failure, never an "
                    + "alert.",
            "Nothing to fix if {targetNode} is meant to observe only. To prove imports there, give its agent a "
                    + "channel (imex.channel.mode=hostPath where the host manages IMEX, or computeDomain)."),
    SAME_NODE_EXPORTER_GPU_HIDDEN(Severity.ERROR, Blame.TARGET,
            "cuMemImportFromShareableHandle returned {driverResult} with the exporter on the same node "
                    + "({sourceNode}) and its GPU ({exporterGpu}) not in the importer's container. A same-node import "
                    + "goes through the exporter's GPU, so the importer needs that GPU's device node; across nodes "
                    + "the same handle imports fine. Measured on two NVLink-connected H200s (driver 580.159.04): "
                    + "with the exporter's /dev/nvidiaN hidden, as a container runtime does, FABRIC imports fail with "
                    + "801 NOT_SUPPORTED and POSIX_FD imports with 101 INVALID_DEVICE; CUDA_VISIBLE_DEVICES alone, or "
                    + "hiding only its /proc/driver/nvidia/gpus entry, breaks nothing. Users of other setups have seen "
                    + "101 for FABRIC.",
            "Give the importer's container the exporter GPU's /dev/nvidiaN (CUDA_VISIBLE_DEVICES may still keep "
                    + "the job on its own GPU), or run exporter and importer in one container that has both GPUs. "
                    + "Run `imexprobe ladder` on the node: rung 4 (device nodes) shows the step that breaks it."),
    INVALID_DEVICE(Severity.ERROR, Blame.TARGET,
            "An operation returned 101 INVALID_DEVICE on the importer ({stage}).",
            "Check that the importer's GPU is visible and healthy (nvidia-smi in the pod) and matches the GPU the "
                    + "request named. An import asked for by hand without exporterNode is taken as cross-node: if "
                    + "the exporter runs on this node, ask again with exporterNode and exporterGpu, since a same-node "
                    + "import whose exporter GPU is hidden from this container fails with 101 too "
                    + "(SAME_NODE_EXPORTER_GPU_HIDDEN)."),
    HANDLE_REJECTED(Severity.ERROR, Blame.SOURCE,
            "The importer's driver rejected the handle ({driverResult}): it is garbled, released, or its exporter "
                    + "is gone (measured: random, mutated and released handles and a dead exporter give 801).",
            "Export afresh and import while the exporter keeps the allocation; check that nothing altered the 64 "
                    + "bytes on the way."),
    CONTEXT_POISONED(Severity.ERROR, Blame.TARGET,
            "The importer's CUDA context is in an illegal state (401 ILLEGAL_STATE), typically after a peer it "
                    + "imported from vanished mid-use.",
            "Restart the importing process; its context cannot recover."),
    ACCESS_DENIED(Severity.ERROR, Blame.TARGET,
            "cuMemSetAccess on the imported mapping returned {driverResult}: the importer's GPU may not access "
                    + "this memory.",
            "Check that the importer grants access to its own GPU ordinal and that the two GPUs share an NVLink "
                    + "domain (fabric state COMPLETED, same cluster UUID and clique)."),
    MAP_FAILED(Severity.ERROR, Blame.TARGET,
            "Mapping the imported memory failed at {stage} with {driverResult}.",
            "Check free GPU memory and address space on the importer, and the size the exporter announced."),
    PATTERN_MISMATCH(Severity.ERROR, Blame.TARGET,
            "The memory read through the fabric does not hold the pattern written on the other side ({stage}).",
            "The mapping succeeded but points at the wrong memory, or the link corrupts data: check NVLink errors "
                    + "(nvidia-smi nvlink -e) and the fabric health of both GPUs."),
    DRIVER_ERROR(Severity.ERROR, Blame.TARGET,
            "{stage} failed with {driverResult}.",
            "See the driver's explanation in the evidence and the stage detail; look at dmesg (Xid) on the node."),
    GPU_OUT_OF_MEMORY(Severity.INFO, Blame.SOURCE,
            "{stage} failed with {driverResult}: the GPU had no memory left for the probe's allocation. A job took it "
                    + "after the agent last read the GPU's free memory (the node report, each mesh round), or "
                    + "imexprobe.driver.min-free-memory is 0. Nothing was learnt about IMEX: the pair is not probed.",
            "Nothing to fix while a job fills the GPU: the next node report reads its memory and the agent leaves "
                    + "it alone (GPU_MEMORY_IN_USE). If no job holds the memory (nvidia-smi "
                    + "--query-compute-apps=pid,used_memory), find the process that does."),
    RELEASE_FAILED(Severity.WARNING, Blame.LOCAL,
            "Releasing the probe's memory failed with {driverResult}.",
            "Watch imexprobe_allocations_live and GPU memory; restart the agent if memory does not return."),
    TIMEOUT(Severity.ERROR, Blame.TARGET,
            "{stage} did not finish within its deadline: {detail}",
            "A driver call that hangs points at the driver or the IMEX daemon (check nvidia-imex and dmesg); a "
                    + "network timeout at the peer's host and port."),
    PEER_UNREACHABLE(Severity.ERROR, Blame.TARGET,
            "The peer agent at {peer} could not be reached: {detail}",
            "Check that the agent runs there, its Service and the NetworkPolicy allowing agent-to-agent traffic."),
    PEER_REJECTED(Severity.ERROR, Blame.TARGET,
            "The peer agent at {peer} refused the request: {detail}",
            "An authentication refusal means the agents do not share the same token (IMEXPROBE_AUTH_TOKEN); "
                    + "other refusals name the peer's reason."),
    NO_AUTH_TOKEN(Severity.ERROR, Blame.SOURCE,
            "This agent has no shared token (IMEXPROBE_AUTH_TOKEN), so its request to the peer agent at {peer} went "
                    + "unsigned, and the peer refused it: {detail}",
            "Give every agent the same IMEXPROBE_AUTH_TOKEN of at least 16 characters (the chart's Secret does); "
                    + "without one an agent's probes are refused and it refuses every peer's exports and imports."),
    PEER_ERROR(Severity.ERROR, Blame.TARGET,
            "The peer agent at {peer} answered something that is not a probe result: {detail}",
            "Check that the target is an imexprobe agent of a compatible version."),

    // ---- mesh evidence: many pairs at once ----------------------------------------------------------------
    TARGET_FAILING(Severity.ERROR, Blame.TARGET,
            "{failedSources} of {sources} sources fail to import on {target}: the fault is at the target.",
            "Start with the target node's own findings (GET /v1/node there): channel, daemon and fabric state."),
    SOURCE_FAILING(Severity.ERROR, Blame.SOURCE,
            "Exports from {source} fail on {failedTargets} of {targets} targets: the fault is at the source.",
            "Start with the source node's own findings (GET /v1/node there): channel, daemon and fabric state."),

    // ---- domain evidence: what the pairs say about IMEX domains (docs/findings.md) -------------------------
    CLIQUE_SPLIT(Severity.ERROR, Blame.LOCAL,
            "NVLink domain {domain} is split into {groups}: nodes import within each group but not across "
                    + "({failedPairs} pairs failed, mostly {driverResult}). The clique is served by more than one IMEX "
                    + "domain (e.g. two ComputeDomains, or IMEX daemons whose node lists do not include each other).",
            "Put the nodes of one clique in one IMEX domain: one ComputeDomain for the workload, or one IMEX "
                    + "nodes_config listing all of them (nvidia-imex-ctl -N on each node shows whom its daemon "
                    + "reaches). Until then keep each job within one group (DRA driver issue #892)."),
    DOMAIN_CLAIM_UNPROVEN(Severity.ERROR, Blame.TARGET,
            "{node} reports NVLink domain {domain}, but imports between it and {failedWith} fail ({driverResult}) "
                    + "while those nodes import from each other: it is not in the IMEX domain it claims.",
            "On {node}: check that its IMEX daemon is up and lists the domain's nodes (nvidia-imex-ctl -N), that "
                    + "it is in the same ComputeDomain as the others, and its NVML fabric state (nvidia-smi -q, "
                    + "Fabric section); drain it from jobs that span the domain until it imports."),
    DOMAIN_MEMBERS_DISAGREE(Severity.WARNING, Blame.LOCAL,
            "Members of one IMEX domain disagree about it: {detail}",
            "Compare nvidia-smi -q (Fabric: ClusterUUID, CliqueId) on the nodes named, the node label "
                    + "nvidia.com/gpu.clique (GPU feature discovery) and the fabric manager's partition: a GPU with "
                    + "a stale registration needs the fabric manager restarted or the GPU reset."),
    IMEX_DOMAINS_NOT_ISOLATED(Severity.WARNING, Blame.LOCAL,
            "A sampled probe across IMEX domains passed: {sourceNode} ({sourceDomain}) exported and {targetNode} "
                    + "({targetDomain}) imported. The two domains are meant to be apart but are not.",
            "If they should be one domain, their NVML fabric registration is wrong (compare cluster UUID and "
                    + "clique on both nodes). If they should be apart, an IMEX daemon's node list or a ComputeDomain "
                    + "spans both: memory of one tenant can be imported by the other."),

    CLIQUE_LABEL_MISMATCH(Severity.WARNING, Blame.LOCAL,
            "Node {node}'s label nvidia.com/gpu.clique={label} (GPU feature discovery) names NVLink domain "
                    + "{labelDomain}, but NVML says {nvml}. The agent goes by NVML; schedulers and workloads that place "
                    + "pods by the label (topologyKey nvidia.com/gpu.clique) do not.",
            "NVML is read live, the label when GPU feature discovery last ran. Compare nvidia-smi -q (Fabric: "
                    + "ClusterUUID, CliqueId) on {node}: if it agrees with NVML here, the label is stale or written "
                    + "by something else: read the gpu-feature-discovery pod's log on that node (it relabels every "
                    + "sleep-interval) and the Node's managedFields (kubectl get node {node} --show-managed-fields -o "
                    + "yaml). Keep multi-node NVLink jobs off {node} until the two agree."),
    COMPUTE_DOMAIN_READY_CHANNEL_FAILS(Severity.ERROR, Blame.TARGET,
            "ComputeDomain {computeDomain} says Ready ({nodes}), but {failedPairs} imports between its nodes fail with "
                    + "800 NOT_PERMITTED ({pairs}): the layer at fault is the IMEX channel of the importing pod on "
                    + "{importers}. Ready covers the ComputeDomain's IMEX daemons, not the channel each pod holds; the "
                    + "importer does not hold the channel the exporter's handle is bound to.",
            "On {importers}: check that the importing pod's container references a ResourceClaim made from this "
                    + "ComputeDomain's channel template (kubectl get resourceclaims -o wide: allocated and reserved "
                    + "for that pod), that /dev/nvidia-caps-imex-channels/channel0 exists in the pod with the major of "
                    + "/proc/devices, and the DRA driver's kubelet plugin log on the node (claim prepared?); restart "
                    + "the pod once its claim is prepared."),
    COMPUTE_DOMAIN_READY_DAEMON_FAILS(Severity.ERROR, Blame.LOCAL,
            "ComputeDomain {computeDomain} says Ready ({nodes}), but {failedPairs} imports between its nodes fail "
                    + "({driverResult}; {pairs}): the channel admitted them, so the layer at fault is the "
                    + "ComputeDomain's IMEX daemons, which report ready to the controller but do not resolve each "
                    + "other's handles (DRA driver issue #1417: 400 invalid resource handle while every daemon probe "
                    + "passed).",
            "In the ComputeDomain's daemon pods on {nodes} (the DRA driver's namespace): nvidia-imex-ctl -N must "
                    + "list every node of the ComputeDomain as connected; read their logs for peers they cannot "
                    + "reach (IP, port 50000, NetworkPolicy) or stale addresses, and delete the daemon pod that "
                    + "lists fewer nodes so the driver restarts it; a daemon whose nvidia-imex-ctl -N hangs is wedged: "
                    + "if restarting its pod does not clear it, drain and reboot the node. Until then keep jobs off "
                    + "the pairs named."),

    // ---- preflight evidence: the instances of one job (docs/preflight.md) ------------------------------------
    PREFLIGHT_PEERS_MISSING(Severity.ERROR, Blame.LOCAL,
            "Only {found} of {expected} preflight instances answered before the deadline ({deadlineSeconds} s); "
                    + "{missing}. Nothing was concluded about the pairs.",
            "Check that every pod of the job runs the preflight with the same IMEXPROBE_PEERS_* settings and "
                    + "--expect, that the headless Service has publishNotReadyAddresses: true (init containers run "
                    + "before the pod is ready), and that the pods may reach each other on SERVER_PORT."),

    // ---- ladder evidence: one export -> import under growing isolation on one node (docs/ladder.md) ----------
    // The verdict table that picks among these is dev.imexprobe.ladder.LadderVerdicts; rung numbers as there.
    LADDER_PASSED(Severity.INFO, Blame.LOCAL,
            "The same export -> import passed on every rung of the ladder ({ranRungs}): one process, two "
                    + "processes, two GPUs, each process limited to its own GPU, the other GPUs' device nodes "
                    + "hidden, and IMEX channel views. Nothing the ladder isolates breaks a same-node import here.",
            "If containers on this node still fail, look at what the ladder does not model: the device cgroup, "
                    + "user namespaces, seccomp and the channel each container was given (compare rung 5b)."),
    LADDER_INCOMPLETE(Severity.WARNING, Blame.LOCAL,
            "No rung that ran failed ({ranRungs}), but rung(s) {skippedRungs} did not run ({skipReasons}), so the "
                    + "ladder cannot say where a same-node import between containers would break.",
            "Run it where those rungs can run: as root with CAP_SYS_ADMIN (mount namespaces) on a node with two "
                    + "GPUs and two IMEX channels; `ladder --gpus A,B` picks the GPUs."),
    LADDER_NOT_RUN(Severity.ERROR, Blame.LOCAL,
            "The ladder could not run rung {rung} ({handleType}): {detail}",
            "This is the ladder's own trouble, not a driver result: read the worker's log lines in the detail; "
                    + "check that `unshare` and /bin/sh exist and that the temporary directory is writable, then "
                    + "run `imexprobe ladder` again."),
    LADDER_FAILS_IN_ONE_PROCESS(Severity.ERROR, Blame.LOCAL,
            "FABRIC memory fails already inside one process (rung 0, {stage}: {driverResult}): this node cannot do "
                    + "fabric memory at all, so isolation is not the question yet. {posixFd}",
            "Fix what `imexprobe check` reports first: 800 at create means no IMEX channel (create "
                    + "/dev/nvidia-caps-imex-channels/channel0 or give the pod a ComputeDomain channel); other codes "
                    + "point at the driver or GPU (dmesg, nvidia-smi). The higher rungs mean nothing until rung 0 "
                    + "passes."),
    LADDER_FABRIC_FAILS_ACROSS_PROCESSES(Severity.ERROR, Blame.LOCAL,
            "FABRIC works inside one process but fails once exporter and importer are two processes on the same "
                    + "GPU with everything visible (rung 1, {stage}: {driverResult}). {posixFd} Layer: the "
                    + "driver's fabric (IMEX) import path on this node; no isolation was involved yet.",
            "Check that both processes hold the same IMEX channel (an export binds to the exporter's "
                    + "lowest-numbered channel), the driver version (580.159.04 measured to work) and dmesg for Xid "
                    + "errors; report to NVIDIA with this ladder output if the channels are right."),
    LADDER_FAILS_ACROSS_PROCESSES(Severity.ERROR, Blame.LOCAL,
            "Neither FABRIC nor POSIX_FD memory can be shared between two processes on the same GPU with "
                    + "everything visible (rung 1, FABRIC {stage}: {driverResult}). {posixFd} Layer: the driver or "
                    + "the operating system, before any container isolation.",
            "Look at dmesg for Xid errors and at restrictions on the processes (LSM, seccomp); re-run as root. "
                    + "Cross-process sharing must work here before containers can share anything."),
    LADDER_FABRIC_FAILS_ACROSS_GPUS(Severity.ERROR, Blame.LOCAL,
            "FABRIC works between two processes on one GPU but fails from GPU {exporterGpu} to GPU {importerGpu} "
                    + "with every GPU visible (rung 2, {stage}: {driverResult}). {posixFd} Layer: the driver's "
                    + "fabric path between these two GPUs, not container isolation (nothing is hidden on this "
                    + "rung).",
            "Check the GPUs' NVLink and fabric state (nvidia-smi topo -m, nvidia-smi -q Fabric section, fabric "
                    + "manager log) and dmesg for Xid errors; try another GPU pair with --gpus to see whether one "
                    + "GPU is at fault."),
    LADDER_FAILS_ACROSS_GPUS(Severity.ERROR, Blame.LOCAL,
            "Neither FABRIC nor POSIX_FD memory of GPU {exporterGpu} can be used on GPU {importerGpu}, with every "
                    + "GPU visible (rung 2, FABRIC {stage}: {driverResult}). {posixFd} These two GPUs cannot map "
                    + "each other's memory. Layer: GPU topology or driver (peer access), not containers.",
            "Check peer access between the two GPUs (nvidia-smi topo -m: NVLink or a PCIe path that allows P2P), "
                    + "the fabric manager on NVSwitch systems, and dmesg; pick a GPU pair that can reach each "
                    + "other."),
    LADDER_FABRIC_NEEDS_EXPORTER_GPU_VISIBLE(Severity.ERROR, Blame.LOCAL,
            "FABRIC fails already with CUDA_VISIBLE_DEVICES (rung 3, {stage}: {driverResult}): it works between "
                    + "GPU {exporterGpu} and GPU {importerGpu} while both processes see both GPUs (rung 2), and "
                    + "fails once each sees only its own. {posixFd} The driver resolves a same-node fabric handle "
                    + "through the exporter's GPU, which the importer's process cannot see: a driver-side lookup, "
                    + "not the container stack (no device node or channel was hidden on this rung).",
            "Let the importer see the exporter's GPU: list both GPUs in CUDA_VISIBLE_DEVICES and pick the device "
                    + "with cudaSetDevice, or run exporter and importer in one container that has both GPUs. For "
                    + "memory shared within one node, POSIX_FD handles over a Unix socket (SCM_RIGHTS) are the "
                    + "alternative where the POSIX_FD column passes. Report the driver behaviour to NVIDIA with "
                    + "this ladder output."),
    LADDER_NEEDS_EXPORTER_GPU_VISIBLE(Severity.ERROR, Blame.LOCAL,
            "Both FABRIC and POSIX_FD fail once each process sees only its own GPU (rung 3, FABRIC {stage}: "
                    + "{driverResult}), while both work with every GPU visible (rung 2). {posixFd} Importing memory "
                    + "that lives on another GPU needs that GPU visible in the importing process, whatever the "
                    + "handle type. Layer: the driver (peer mappings go through the peer device), not the "
                    + "container stack.",
            "Make the exporter's GPU visible to the importer (both GPUs in CUDA_VISIBLE_DEVICES, or one container "
                    + "with both GPUs); otherwise stage the data through host memory."),
    LADDER_FABRIC_NEEDS_EXPORTER_DEVICE_NODE(Severity.ERROR, Blame.LOCAL,
            "FABRIC works with CUDA_VISIBLE_DEVICES (rung 3) but fails once the other GPUs' device nodes are "
                    + "hidden as a container runtime hides them (rung 4, {stage}: {driverResult}). {posixFd} The "
                    + "driver finds the exporter's GPU on this host but cannot open it: a driver-side lookup, not "
                    + "the container stack.",
            "Give the importer's container the exporter's /dev/nvidiaN (the device node; CUDA_VISIBLE_DEVICES can "
                    + "still keep the GPU out of use), e.g. expose all GPUs' device nodes to both containers; or "
                    + "share memory within the node with POSIX_FD handles where that column passes. Report the "
                    + "driver behaviour to NVIDIA with this ladder output."),
    LADDER_NEEDS_EXPORTER_DEVICE_NODE(Severity.ERROR, Blame.LOCAL,
            "Both FABRIC and POSIX_FD work with CUDA_VISIBLE_DEVICES (rung 3) but fail once the other GPUs' "
                    + "device nodes are hidden (rung 4, FABRIC {stage}: {driverResult}). {posixFd} Importing "
                    + "memory that lives on another GPU needs that GPU's device node in the importer's mount "
                    + "namespace. Layer: the container stack removes what the driver needs.",
            "Expose the exporter's /dev/nvidiaN to the importer's container (its /proc/driver/nvidia/gpus entry is "
                    + "not needed: measured on two H200s), or keep exporter and importer in one container that has "
                    + "both GPUs."),
    LADDER_SHARED_CHANNEL_FAILS(Severity.ERROR, Blame.LOCAL,
            "FABRIC fails although exporter and importer both see exactly one and the same IMEX channel "
                    + "({exporterChannel}; rung 5a, {stage}: {driverResult}), while it works with the whole channel "
                    + "directory (rung 1). Layer: the channel view itself (what the container runtime mounts "
                    + "into /dev/nvidia-caps-imex-channels).",
            "Compare the channel node in the container with the host's (major and minor must match "
                    + "/proc/devices; read permission for the process) and check that the DRA driver or runtime "
                    + "injects the channel as a character device."),
    LADDER_CHANNELS_NOT_ENFORCED(Severity.WARNING, Blame.LOCAL,
            "With different IMEX channels (exporter only {exporterChannel}, importer only {importerChannel}; rung "
                    + "5b) the FABRIC import gave {outcome} instead of 800 NOT_PERMITTED, which the H200 returned "
                    + "for the same setup.",
            "If the import succeeded, channels do not keep this node's workloads apart: do not rely on them for "
                    + "isolation and report the driver version to NVIDIA. Another code: read the rung's stage "
                    + "detail."),
    LADDER_POSIX_FD_FAILS(Severity.WARNING, Blame.LOCAL,
            "POSIX_FD fails on rung {rung} ({stage}: {detail}) where FABRIC behaves as expected: the descriptor's "
                    + "trip over a Unix socket (SCM_RIGHTS) or its import fails. Fabric handles are not affected; "
                    + "the POSIX_FD column is only a comparison.",
            "Check that both processes may use Unix sockets in the ladder's temporary directory (seccomp, LSM) "
                    + "and the driver's POSIX_FD support (HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)."),
    LADDER_INCONSISTENT(Severity.WARNING, Blame.LOCAL,
            "FABRIC fails on rung {rung} but passes on the more isolated rung(s) {laterPassing}: the failure does "
                    + "not follow the isolation, so it is probably transient (a timeout, a busy GPU) or depends on "
                    + "something the rungs change by accident.",
            "Run the ladder again; if the pattern repeats, compare the stage details of the failing and passing "
                    + "rungs.");

    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([A-Za-z]+)}");

    private final Severity severity;
    private final Blame blame;
    private final String cause;
    private final String remedy;

    FindingCode(Severity severity, Blame blame, String cause, String remedy) {
        this.severity = severity;
        this.blame = blame;
        this.cause = cause;
        this.remedy = remedy;
    }

    public Severity severity() {
        return severity;
    }

    public Blame blame() {
        return blame;
    }

    /** The cause as written in the catalogue, placeholders and all. */
    public String causeTemplate() {
        return cause;
    }

    public String remedyTemplate() {
        return remedy;
    }

    public Finding finding(Map<String, ?> evidence) {
        return finding(severity, evidence);
    }

    /** The same finding at another severity, for the few whose weight depends on context. */
    public Finding finding(Severity actualSeverity, Map<String, ?> evidence) {
        Map<String, Object> copy = new LinkedHashMap<>();
        evidence.forEach((k, v) -> copy.put(k, v));
        return new Finding(name(), actualSeverity, blame, fill(cause, copy), fill(remedy, copy),
                Collections.unmodifiableMap(copy));
    }

    private static String fill(String template, Map<String, Object> evidence) {
        Matcher m = PLACEHOLDER.matcher(template);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            Object v = evidence.get(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(v == null ? "unknown" : String.valueOf(v)));
        }
        m.appendTail(out);
        return out.toString();
    }
}
