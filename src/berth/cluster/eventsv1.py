"""``events.k8s.io/v1`` Events as a view of core ``v1`` Events, as in kube-apiserver (one storage, two shapes).

Why: Go components (the scheduler, controllers using the new recorder) write ``events.k8s.io/v1`` Events while
``kubectl get events`` and ``kubectl describe`` read core ``v1``; on a real cluster both see the same objects. The
embedded server stores core Events only and converts on the way in and out, following upstream's conversion
(``pkg/apis/events/v1``): ``regarding``/``involvedObject``, ``note``/``message``, ``reportingController``/
``reportingComponent``, ``deprecatedSource``/``source``, ``deprecated{First,Last}Timestamp``/``{first,last}Timestamp``,
``deprecatedCount``/``count``; everything else keeps its name.

Pure: dicts in, dicts out.
"""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]

RESOURCE = "events.events.k8s.io"
CORE_RESOURCE = "events"
API_VERSION = "events.k8s.io/v1"

# events.k8s.io/v1 field -> core/v1 field
_TO_CORE = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_FROM_CORE = {v: k for k, v in _TO_CORE.items()}


def to_core(obj: Obj) -> Obj:
    """An ``events.k8s.io/v1`` Event in core ``v1`` shape."""
    out: Obj = {"apiVersion": "v1", "kind": "Event"}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        out[_TO_CORE.get(key, key)] = value
    return out


def from_core(obj: Obj) -> Obj:
    """A core ``v1`` Event in ``events.k8s.io/v1`` shape."""
    out: Obj = {"apiVersion": API_VERSION, "kind": "Event"}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        out[_FROM_CORE.get(key, key)] = value
    return out


def field_selector_to_core(selector: str) -> str:
    """``regarding.name=p,reportingController=x`` -> ``involvedObject.name=p,reportingComponent=x``."""
    if not selector:
        return selector
    parts = []
    for part in selector.split(","):
        m = re.match(r"^\s*([^=!]+)(.*)$", part)
        if not m:
            parts.append(part)
            continue
        field, rest = m.group(1).strip(), m.group(2)
        head, dot, tail = field.partition(".")
        field = _TO_CORE.get(head, head) + (dot + tail if dot else "")
        parts.append(field + rest)
    return ",".join(parts)
