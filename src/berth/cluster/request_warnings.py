"""Warnings for the request being served (``Warning: 299 - "..."`` response headers, which kubectl prints as
``Warning: ...``): a deprecated CRD version, unknown fields dropped under ``fieldValidation=Warn``.

The HTTP handler starts a list per request (:func:`begin`); code anywhere below it calls :func:`warn`. A context
variable, so each handler thread sees its own request's list, and in-process callers (controllers), which start
none, warn into nothing.
"""

from __future__ import annotations

from contextvars import ContextVar

_CURRENT: ContextVar[list[str] | None] = ContextVar("berth_request_warnings", default=None)


def begin() -> list[str]:
    """Start collecting for a new request; returns the list the warnings go into."""
    found: list[str] = []
    _CURRENT.set(found)
    return found


def warn(text: str) -> None:
    """Add a warning to the current request (once; nothing outside a request)."""
    found = _CURRENT.get()
    if found is not None and text not in found:
        found.append(text)


def current() -> list[str]:
    """The current request's warnings so far (empty outside a request)."""
    return _CURRENT.get() or []


def header_value(text: str) -> str:
    """RFC 7234 warning value, as kube-apiserver writes it: ``299 - "text"``."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
