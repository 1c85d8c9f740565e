"""berth's error tree: every failure a user can cause maps to one class with an exit code.

The CLI catches :class:`BerthError` and prints ``error: <message>`` with no traceback; anything else is a bug.
"""

from __future__ import annotations


class BerthError(Exception):
    """Base of all expected failures. ``exit_code`` is what the CLI returns."""

    exit_code = 1


class InputError(BerthError):
    """Bad input from the user (files, flags, configuration). Exit code 2.

    ``where`` names the place (file, document, field path) so the message says what, where and how to fix.
    """

    exit_code = 2

    def __init__(self, message: str, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class MultiInputError(InputError):
    """Several input problems reported together (e.g. every config validation error at once)."""

    def __init__(self, problems: list[str], header: str = "invalid input") -> None:
        self.problems = list(problems)
        body = "\n".join(f"  - {p}" for p in self.problems)
        Exception.__init__(self, f"{header} ({len(self.problems)} problem(s)):\n{body}")
        self.where = None


class NotImplementedYet(BerthError):
    """A feature that is planned but not built: says so plainly instead of pretending to succeed."""

    exit_code = 3

    def __init__(self, feature: str) -> None:
        super().__init__(f"{feature}: not implemented yet")


class ToolError(BerthError):
    """An external tool (helm, kubectl) is missing or failed."""

    exit_code = 1
