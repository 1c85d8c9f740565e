"""``meta.k8s.io/v1 Table`` rendering: what ``kubectl get`` prints comes from here.

Why: kubectl asks for Tables and prints the server's columns; without them it falls back to ``NAME AGE``. So the
server must compute the same columns and cells as the real printers (k8s.io/kubernetes ``pkg/printers/
internalversion/printers.go``; for custom resources apiextensions' ``tableconvertor`` over
``additionalPrinterColumns``; for everything else the API server's default ``Name``/``Created At`` convertor).

As upstream, every column is produced, wide ones (``-o wide``) marked ``priority: 1``; kubectl hides those unless
asked. Ages use upstream ``duration.HumanDuration`` (``45s``, ``3m2s``, ``10m``, ``5h4m``, ``2d3h``, ``400d``, ``3y20d``).
Each row carries the object as ``PartialObjectMetadata`` (default), the full object (``includeObject=Object``) or
nothing (``None``): kubectl reads namespaces, labels and sort keys from it.

The printers are in ``printers_core.py`` and ``printers_more.py``, their pieces in ``table_cells.py``.

Pure: objects and a clock in, a Table dict out.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from berth.cluster.printers_core import PRINTERS as CORE_PRINTERS
from berth.cluster.printers_core import job_status, name_age_cells, node_roles, pod_conditions, pod_status
from berth.cluster.printers_more import MORE_PRINTERS
from berth.cluster.table_cells import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    dig,
    human_duration,
    parse_time,
    rfc3339,
    selector_string,
)

__all__ = [
    "GENERIC",
    "PRINTERS",
    "age",
    "human_duration",
    "job_status",
    "json_path",
    "node_roles",
    "parse_time",
    "pod_status",
    "rfc3339",
    "selector_string",
    "to_table",
]

PRINTERS: dict[tuple[str, str], Printer] = {**CORE_PRINTERS, **MORE_PRINTERS}
"""Every built-in kind's printer by (group, kind)."""

GENERIC = Printer((NAME, AGE), name_age_cells)
"""Built-in kinds without a printer here: ``NAME AGE`` (what most upstream printers start with)."""


# -- custom resources: additionalPrinterColumns ------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\.([A-Za-z0-9_\-$]+)|\[(\d+|\*)\]|\[['"]([^'"]+)['"]\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*['"]?([^'")]*)['"]?\)\]"""
)


def json_path(obj: Any, expression: str) -> list[Any]:
    """The values a printer-column JSONPath selects (subset: ``.a.b``, ``[0]``, ``[*]``, ``['k.x']``,
    ``[?(@.type=="Ready")]``), in document order."""
    expr = expression.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1]
    if expr.startswith("$"):
        expr = expr[1:]
    current: list[Any] = [obj]
    pos = 0
    while pos < len(expr):
        match = _TOKEN.match(expr, pos)
        if match is None:
            return []
        field, index, quoted, filter_key, filter_value = match.groups()
        nxt: list[Any] = []
        for value in current:
            if field is not None or quoted is not None:
                key = field if field is not None else quoted
                if isinstance(value, Mapping) and key in value:
                    nxt.append(value[key])
            elif index is not None:
                if isinstance(value, list):
                    if index == "*":
                        nxt.extend(value)
                    elif int(index) < len(value):
                        nxt.append(value[int(index)])
            elif filter_key is not None and isinstance(value, list):
                for item in value:
                    found: Any = item
                    for part in filter_key.split("."):
                        found = found.get(part) if isinstance(found, Mapping) else None
                    if (
                        found is not None
                        and str(found if not isinstance(found, bool) else str(found).lower()) == filter_value
                    ):
                        nxt.append(item)
        current = nxt
        pos = match.end()
    return current


def _cell_for_json_value(column_type: str, value: Any, now: dt.datetime) -> Any:
    """apiextensions ``cellForJSONValue`` (plus string printing of non-string values, as its JSONPath printer does)."""
    if value is None:
        return None
    if column_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            return int(value)
        return None
    if column_type == "number":
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "date":
        if isinstance(value, str):
            when = parse_time(value)
            return "<invalid>" if when is None else human_duration(now - when)
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def custom_resource_printer(
    printer_columns: Sequence[Mapping[str, Any]],
) -> tuple[list[Column], Callable[[Obj, dt.datetime], Cells]]:
    """Columns and cell function for a CRD version's ``additionalPrinterColumns`` (default: ``Age``)."""
    specs = list(printer_columns) or [
        {
            "name": "Age",
            "type": "date",
            "jsonPath": ".metadata.creationTimestamp",
            "description": AGE.description,
        }
    ]
    columns = [NAME] + [
        Column(
            str(c.get("name", "")),
            str(c.get("type", "string")),
            str(c.get("description", "")),
            int(c.get("priority", 0) or 0),
            str(c.get("format", "")),
        )
        for c in specs
    ]

    def cells(obj: Obj, now: dt.datetime) -> Cells:
        out: Cells = [dig(obj, "metadata", "name")]
        for c in specs:
            found = json_path(obj, str(c.get("jsonPath", "")))
            out.append(_cell_for_json_value(str(c.get("type", "string")), found[0] if found else None, now))
        return out

    return columns, cells


# -- the Table -------------------------------------------------------------------------------------------------------

INCLUDE_METADATA = "Metadata"
INCLUDE_OBJECT = "Object"
INCLUDE_NONE = "None"


def _row_object(obj: Obj, include_object: str) -> Any:
    if include_object == INCLUDE_OBJECT:
        return obj
    meta = dict(obj.get("metadata") or {})
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}


def printer_for(kind: str, api_group: str) -> Printer:
    """The printer of a built-in kind (``GENERIC`` when there is none)."""
    return PRINTERS.get((api_group, kind)) or GENERIC


def to_table(
    kind: str,
    objects: Sequence[Obj],
    *,
    now: dt.datetime,
    api_group: str | None = None,
    wide: bool = True,
    include_object: str = INCLUDE_METADATA,
    printer_columns: Sequence[Mapping[str, Any]] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Obj:
    """Render ``objects`` (all of ``kind``) as a ``meta.k8s.io/v1`` Table.

    Args:
        kind: the objects' kind.
        objects: the objects, in the order rows should appear.
        now: the clock for AGE columns (aware datetime, UTC).
        api_group: the kind's group; default from the first object's apiVersion.
        wide: include ``priority: 1`` columns (the real server always does; kubectl hides them without ``-o wide``).
        include_object: ``Metadata`` (PartialObjectMetadata), ``Object`` (full objects) or ``None``.
        printer_columns: for a custom resource, its version's ``additionalPrinterColumns`` (``[]`` for none, which
            gives ``NAME AGE``); leave None for built-in kinds.
        metadata: Table ``metadata`` (``resourceVersion``, ``continue``).
    """
    if api_group is None:
        api_group = str((objects[0] if objects else {}).get("apiVersion", "")).rpartition("/")[0]
    if printer_columns is not None:
        columns, cell_fn = custom_resource_printer(printer_columns)
    else:
        printer = printer_for(kind, api_group)
        columns, cell_fn = list(printer.columns), printer.cells
    keep = [i for i, c in enumerate(columns) if wide or c.priority == 0]
    rows: list[Obj] = []
    for obj in objects:
        cells = cell_fn(obj, now)
        row: Obj = {"cells": [cells[i] if i < len(cells) else None for i in keep]}
        if kind == "Pod" and printer_columns is None:
            conditions = pod_conditions(obj)
            if conditions:
                row["conditions"] = conditions
        if include_object != INCLUDE_NONE:
            row["object"] = _row_object(obj, include_object)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(metadata or {}),
        "columnDefinitions": [columns[i].definition() for i in keep],
        "rows": rows,
    }
