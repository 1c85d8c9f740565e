"""HTTP scheduler extenders (upstream ``pkg/scheduler/extender.go``): webhooks that filter, score, preempt and bind.

Why: ``KubeSchedulerConfiguration.extenders`` is how many existing schedulers add logic without writing plugins
(GPU sharing, storage locality ...). kube-scheduler POSTs JSON to ``<urlPrefix>/<verb>``; berth does the same with
the same bodies, so an extender written for kube-scheduler works unchanged:

- **filter** -- ``ExtenderArgs{pod, nodes | nodenames}`` -> ``ExtenderFilterResult{nodes | nodenames,
  failedNodes, failedAndUnresolvableNodes, error}``; called after the Filter plugins on the feasible nodes, each
  extender narrowing what the next one sees;
- **prioritize** -- the same args -> ``[{host, score}]``; a score (0..10) counts ``score * weight * 10``;
- **preempt** -- ``ExtenderPreemptionArgs{pod, nodeToVictims | nodeNameToMetaVictims}`` ->
  ``ExtenderPreemptionResult{nodeNameToMetaVictims}``: trims DefaultPreemption's candidates;
- **bind** -- ``ExtenderBindingArgs{PodName, PodNamespace, PodUID, Node}`` -> ``ExtenderBindingResult{Error}``:
  the extender binds instead of the bind plugins.

``nodeCacheCapable`` extenders get node names instead of whole Node objects. An extender with
``managedResources`` is only asked about pods requesting (or limiting) one of them. ``ignorable`` extenders'
failures are skipped. Response keys are matched as Go's JSON decoder matches them (exact, else case-insensitive).
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from berth.schedule.framework.extender import ExtenderError, Victims
from berth.schedule.framework.interface import EXTENDER_NAME

if TYPE_CHECKING:
    from berth.schedule.config import Extender
    from berth.schedule.framework.types import NodeInfo, PodInfo

DEFAULT_TIMEOUT_SECONDS = 5.0
"""Upstream ``DefaultExtenderTimeout``: used when ``httpTimeout`` is not set."""
MAX_EXTENDER_PRIORITY = 10
"""Upstream ``extenderv1.MaxExtenderPriority``: extender scores are 0..10, scaled by 100 / 10 to plugin scores."""


__all__ = ["EXTENDER_NAME", "ExtenderError", "HTTPExtender", "Victims", "build"]


def _field(doc: Mapping[str, Any], name: str) -> Any:
    """``doc[name]`` as Go's ``encoding/json`` finds a struct field: exact key first, else case-insensitive."""
    if name in doc:
        return doc[name]
    lowered = name.lower()
    return next((v for k, v in doc.items() if isinstance(k, str) and k.lower() == lowered), None)


def _wants(containers: Any, managed: frozenset[str]) -> bool:
    for container in containers or ():
        resources = (container or {}).get("resources") or {}
        for part in ("requests", "limits"):
            if managed.intersection((resources.get(part) or {}).keys()):
                return True
    return False


class HTTPExtender:
    """One configured extender, called over HTTP(S) with upstream's request and response bodies."""

    def __init__(self, config: Extender) -> None:
        self.config = config
        self.url_prefix = config.url_prefix.rstrip("/")
        self.weight = int(config.weight)
        self.ignorable = bool(config.ignorable)
        self.node_cache_capable = bool(config.node_cache_capable)
        self.managed = frozenset(r.name for r in config.managed_resources)
        self.timeout = config.http_timeout_seconds or DEFAULT_TIMEOUT_SECONDS
        self._context = _tls_context(config) if config.enable_https else None

    @property
    def name(self) -> str:
        """Upstream names an extender by its URL prefix (in logs and score breakdowns)."""
        return self.config.url_prefix

    @property
    def is_filter(self) -> bool:
        return self.config.is_filter

    @property
    def is_prioritizer(self) -> bool:
        return self.config.is_prioritizer

    @property
    def is_binder(self) -> bool:
        return self.config.is_binder

    @property
    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: PodInfo) -> bool:
        """True when the extender manages no resources, or the pod requests or limits one it manages."""
        if not self.managed:
            return True
        spec = pod.pod.get("spec") or {}
        return _wants(spec.get("containers"), self.managed) or _wants(
            spec.get("initContainers"), self.managed
        )

    # --- verbs ------------------------------------------------------------------------------------------------

    def filter(
        self, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """(nodes that pass, failed node -> reason, failed-and-unresolvable node -> reason)."""
        if not self.config.filter_verb:
            return list(nodes), {}, {}
        result = self._send(self.config.filter_verb, self._args(pod, nodes))
        if not isinstance(result, Mapping):
            raise ExtenderError(
                f"extender {self.name} answered {self.config.filter_verb} with {_kind(result)}"
            )
        error = _field(result, "error")
        if error:
            raise ExtenderError(str(error))
        by_name = {n.name: n for n in nodes}
        passed: list[NodeInfo] = []
        names = _field(result, "nodenames")
        node_list = _field(result, "nodes")
        if self.node_cache_capable and names is not None:
            for name in names:
                if name not in by_name:
                    raise ExtenderError(
                        f'extender "{self.name}" claims a filtered node "{name}" which is not found in the input '
                        "node list"
                    )
                passed.append(by_name[name])
        elif isinstance(node_list, Mapping):
            for item in _field(node_list, "items") or ():
                name = str(((item or {}).get("metadata") or {}).get("name") or "")
                if name in by_name:  # berth keeps its own node state: the extender only names the survivors
                    passed.append(by_name[name])
        return (
            passed,
            _reasons(_field(result, "failedNodes")),
            _reasons(_field(result, "failedAndUnresolvableNodes")),
        )

    def prioritize(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """([(node, score 0..10)], weight); an extender without a prioritize verb scores every node 0."""
        if not self.config.prioritize_verb:
            return [(n.name, 0) for n in nodes], 0
        result = self._send(self.config.prioritize_verb, self._args(pod, nodes))
        if not isinstance(result, list):
            raise ExtenderError(
                f"extender {self.name} answered {self.config.prioritize_verb} with {_kind(result)}"
            )
        scores = []
        for entry in result:
            if not isinstance(entry, Mapping):
                raise ExtenderError(f"extender {self.name}: a host priority is {_kind(entry)}, not an object")
            score = _field(entry, "score")
            if isinstance(score, bool) or not isinstance(score, int):
                raise ExtenderError(
                    f"extender {self.name}: score {score!r} of {_field(entry, 'host')} is not an integer"
                )
            scores.append((str(_field(entry, "host") or ""), score))
        return scores, self.weight

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Ask the extender to bind ``pod`` to ``node_name`` (it calls the API server itself)."""
        body = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": _uid(pod), "Node": node_name}
        result = self._send(self.config.bind_verb, body)
        error = _field(result, "error") if isinstance(result, Mapping) else None
        if error:
            raise ExtenderError(str(error))

    def process_preemption(
        self, pod: PodInfo, victims: Mapping[str, Victims], nodes: Mapping[str, NodeInfo]
    ) -> dict[str, Victims]:
        """The candidates the extender keeps, with the victims it chose (pods found on those nodes by uid)."""
        args: dict[str, Any] = {"pod": pod.pod}
        if self.node_cache_capable:
            args["nodeNameToMetaVictims"] = {
                node: {"pods": [{"uid": _uid(p)} for p in v.pods], "numPDBViolations": v.num_pdb_violations}
                for node, v in victims.items()
            }
        else:
            args["nodeToVictims"] = {
                node: {"pods": [p.pod for p in v.pods], "numPDBViolations": v.num_pdb_violations}
                for node, v in victims.items()
            }
        result = self._send(self.config.preempt_verb, args)
        if not isinstance(result, Mapping):
            raise ExtenderError(
                f"extender {self.name} answered {self.config.preempt_verb} with {_kind(result)}"
            )
        out: dict[str, Victims] = {}
        for node_name, meta in (_field(result, "nodeNameToMetaVictims") or {}).items():
            info = nodes.get(node_name)
            if info is None:
                raise ExtenderError(f"extender {self.name} named node {node_name}, which does not exist")
            on_node = {_uid(p): p for p in info.pods}
            picked = []
            for ref in _field(meta or {}, "pods") or ():
                uid = str(_field(ref or {}, "uid") or "")
                if uid not in on_node:
                    raise ExtenderError(
                        f"extender {self.name} claims to preempt pod (UID: {uid}) on node {node_name}, but the pod "
                        "is not found on that node"
                    )
                picked.append(on_node[uid])
            out[node_name] = Victims(tuple(picked), int(_field(meta or {}, "numPDBViolations") or 0))
        return out

    # --- transport --------------------------------------------------------------------------------------------

    def _args(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        if self.node_cache_capable:
            return {"pod": pod.pod, "nodenames": [n.name for n in nodes]}
        return {"pod": pod.pod, "nodes": {"metadata": {}, "items": [n.node for n in nodes]}}

    def _send(self, verb: str, body: Any) -> Any:
        url = f"{self.url_prefix}/{verb}"
        request = urllib.request.Request(
            url,
            data=json.dumps(body, separators=(",", ":")).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self._context) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {exc.code}") from exc
        except (OSError, ValueError) as exc:
            raise ExtenderError(f"failed {verb} with extender at URL {url}: {exc}") from exc
        try:
            return json.loads(payload) if payload.strip() else None
        except ValueError as exc:
            raise ExtenderError(f"extender at URL {url} answered {verb} with invalid JSON: {exc}") from exc


def build(configs: Sequence[Extender]) -> list[HTTPExtender]:
    return [HTTPExtender(c) for c in configs]


def _uid(pod: PodInfo) -> str:
    return str((pod.pod.get("metadata") or {}).get("uid") or "")


def _reasons(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _kind(value: Any) -> str:
    return "nothing" if value is None else f"a JSON {type(value).__name__}"


def _tls_context(config: Extender) -> ssl.SSLContext:
    """Upstream ``makeTransport``: HTTPS with the configured client certificate and CA; without a CA the
    extender's certificate is not verified (kube-scheduler sets ``insecure`` then too)."""
    tls = dict(config.tls_config or {})
    ca_file, ca_data = tls.get("caFile"), tls.get("caData")
    context = ssl.create_default_context()
    if tls.get("insecure") or not (ca_file or ca_data):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(
            cafile=ca_file or None, cadata=base64.b64decode(ca_data).decode() if ca_data else None
        )
    cert_file, key_file = tls.get("certFile"), tls.get("keyFile")
    if tls.get("certData") and tls.get("keyData"):
        # ssl wants files: the PEM data goes to private temporary files just long enough to be loaded.
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
            cert.write_bytes(base64.b64decode(tls["certData"]))
            key.write_bytes(base64.b64decode(tls["keyData"]))
            key.chmod(0o600)
            context.load_cert_chain(str(cert), str(key))
    elif cert_file and key_file:
        context.load_cert_chain(cert_file, key_file)
    return context
