"""The one client error tree: how a request to an API server can end, for every part's client code.

A module of its own, without the official client, so code that only names these errors (the install executors,
the scheduler's live API) does not pay for importing ``kubernetes``; :mod:`berth.kube.client` re-exports every
name, which is where callers find them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from berth.kube.errors import BerthError


class ClientError(BerthError):
    """A request to an API server failed (exit code 1: the cluster said no, or did not answer)."""


class Unreachable(ClientError):
    """No answer from the API server: connection refused or reset, timed out, a truncated or malformed answer.
    ``url``: the server the request was sent to ("" when not known)."""

    def __init__(self, message: str = "", url: str = "") -> None:
        super().__init__(message)
        self.url = url


class StatusError(ClientError):
    """The API server answered with an error ``Status``; ``status`` is its HTTP code, ``reason`` and ``message``
    the Status fields, ``body`` the whole Status (empty when the answer was not JSON), ``what`` the request as the
    caller names it (put in front of the message)."""

    code: ClassVar[int | None] = None
    """The HTTP status a subclass stands for (None: any other)."""

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        body: Mapping[str, Any] | None = None,
        what: str = "",
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.body: dict[str, Any] = dict(body or {})
        self.what = what
        head = f"{what}: " if what else ""
        super().__init__(f"{head}{status} {reason}: {message}".replace(":  ", ": "))

    @property
    def api_message(self) -> str:
        """The Status ``message`` (install's name for it)."""
        return self.message


class Unauthorized(StatusError):
    """401: the credentials of the kube context were not accepted."""

    code = 401


class Forbidden(StatusError):
    """403: the identity of the kube context may not do this."""

    code = 403


class NotFound(StatusError):
    """404: no such object (or resource)."""

    code = 404


class Conflict(StatusError):
    """409: the object exists already, changed since it was read, or (server-side apply) has fields another
    manager owns; ``reason`` tells which (``AlreadyExists``, ``Conflict``)."""

    code = 409


class Invalid(StatusError):
    """422: the object failed validation; ``body.details.causes`` name the fields."""

    code = 422


class ServerError(StatusError):
    """5xx: the API server failed (or is going away)."""


_STATUS_CLASSES: dict[int, type[StatusError]] = {
    cls.code: cls for cls in (Unauthorized, Forbidden, NotFound, Conflict, Invalid) if cls.code is not None
}


def status_error(
    status: int, reason: str = "", message: str = "", body: Mapping[str, Any] | None = None, what: str = ""
) -> StatusError:
    """The :class:`StatusError` subclass for an answered failure (a plain one for codes without their own)."""
    cls = _STATUS_CLASSES.get(status) or (ServerError if status >= 500 else StatusError)
    return cls(status, reason, message, body, what)
