"""Duplicate mapping keys in YAML text, with the field path and line of each repeat.

Why a module of its own: PyYAML (behind :mod:`berth.kube.yamlio`) silently keeps the last of two equal keys, while
Kubernetes' strict decoders (``sigs.k8s.io/yaml`` ``YAMLToJSONStrict``, used for component configs such as
``KubeSchedulerConfiguration``) refuse them: ``key "x" already set in map``. A strict reader calls
:func:`duplicate_keys` on the same text it loads with yamlio; this module only inspects the node tree, it builds no
values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class DuplicateKey:
    """A key repeated in one mapping: ``path`` of the mapping (``""`` at the top), 1-based ``line`` of the repeat."""

    document: int
    path: str
    key: str
    line: int

    def message(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f'{where}key "{self.key}" already set in map (line {self.line})'


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(node: yaml.Node, path: str, document: int, out: list[DuplicateKey]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "<complex key>"
            if key == "<<":  # merge keys may legitimately repeat
                continue
            if key in seen:
                out.append(DuplicateKey(document, path, key, key_node.start_mark.line + 1))
            seen.add(key)
            _walk(value_node, _child(path, key), document, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, f"{path}[{index}]", document, out)


def duplicate_keys(text: str) -> list[DuplicateKey]:
    """Every repeated key in every document of ``text``. Malformed YAML yields nothing here (yamlio reports it)."""
    out: list[DuplicateKey] = []
    try:
        for document, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
            if node is not None:
                _walk(node, "", document, out)
    except yaml.YAMLError:
        return out
    return out
