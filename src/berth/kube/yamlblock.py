"""Block-style YAML for plain data, written directly: the bytes :func:`berth.kube.yamlio.dump` gets from PyYAML.

Every file berth writes about a render -- the manifest index, the lifecycle plan, selections, facts -- is a tree
of dicts, lists, short ASCII strings, ints and booleans. PyYAML writes one by building a node graph in Python and
handing it to libyaml's emitter, which calls back into Python to resolve every scalar; for a plan or an index of a
large chart that is a good part of ``install setup``'s time after Helm has rendered. This module writes such a
tree itself, following libyaml's emitter (``emitter.c``: block mappings and sequences, indentless sequences under
a key, ``{}``/``[]`` for empty ones, plain or single-quoted scalars chosen by ``yaml_emitter_analyze_scalar`` and
folded at column 80 as ``yaml_emitter_write_plain_scalar``/``..._single_quoted_scalar`` fold them).

It declines (returns None, and the caller lets PyYAML write the document) whatever it does not write exactly:
floats, non-ASCII or non-printable text, line breaks (literal blocks), long keys, non-string keys, ints that do
not read back as ints, the same dict or list twice (PyYAML writes anchors), and any type but the plain ones.
``tests/kube/test_yamlblock.py`` compares it with PyYAML on generated trees and on every YAML file of the repo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.kube.yamlscalar import BOOL, INT, NULL, STR

_CONSTANTS: dict[object, tuple[str, str]] = {
    None: ("null", NULL),
    True: ("true", BOOL),
    False: ("false", BOOL),
}
"""PyYAML's safe representation of None and the booleans: text and tag."""
_BEST_WIDTH = 80  # libyaml's default line width
_BEST_INDENT = 2
_MAX_KEY = 100
"""Longer keys are left to PyYAML (libyaml writes a key of more than 128 bytes as an explicit ``? key``)."""

_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


class _Declined(Exception):
    """The tree holds something this writer leaves to PyYAML."""


def _plain_allowed(text: str) -> bool:
    """libyaml's ``block_plain_allowed`` for a non-empty printable ASCII text without line breaks: no leading or
    trailing space, no ``---``/``...`` start, no indicator where it would start a YAML construct."""
    if text[0] == " " or text[-1] == " " or text.startswith(("---", "...")):
        return False
    first = text[0]
    after_first = text[1] if len(text) > 1 else " "  # past the end counts as whitespace
    if first in _FIRST_INDICATORS or (first in "?:-" and after_first == " "):
        return False
    if ": " in text or (text.endswith(":") and len(text) > 1):
        return False  # a ':' after the first character, followed by whitespace or the end
    return " #" not in text


class _Scalars:
    """The text of each string as a scalar (plain or single-quoted), remembered: documents repeat their strings
    (kinds, roles, namespaces, folder names) hundreds of times."""

    def __init__(self, plain_tag: Callable[[str], str]) -> None:
        self.plain_tag = plain_tag
        self.seen: dict[str, str] = {}

    def text(self, value: str) -> str:
        found = self.seen.get(value)
        if found is None:
            if not value.isascii() or not value.isprintable():  # tabs, breaks, control characters, non-ASCII
                raise _Declined
            if value and _plain_allowed(value) and self.plain_tag(value) == STR:
                found = value
            else:
                found = "'" + value.replace("'", "''") + "'"
            if len(self.seen) < 100_000:
                self.seen[value] = found
        return found


class _Emitter:
    """libyaml's emitter state for block collections: the column, whether the last thing written was whitespace,
    and whether the line so far is only indentation."""

    __slots__ = ("column", "containers", "indention", "out", "scalars", "whitespace")

    def __init__(self, scalars: _Scalars) -> None:
        self.out: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.scalars = scalars
        self.containers: set[int] = set()

    def write_indent(self, indent: int) -> None:
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.out.append("\n")
            self.column = 0
        if self.column < indent:
            self.out.append(" " * (indent - self.column))
            self.column = indent
        self.whitespace = True
        self.indention = True

    def enter(self, value: dict[Any, Any] | list[Any]) -> None:
        key = id(value)
        if key in self.containers:
            raise _Declined  # PyYAML writes an anchor and an alias
        self.containers.add(key)

    def mapping(self, value: dict[Any, Any], indent: int) -> None:
        """A non-empty block mapping whose keys are at ``indent``."""
        self.enter(value)
        out = self.out
        for key, item in value.items():
            if key.__class__ is not str or len(key) > _MAX_KEY:
                raise _Declined
            self.write_indent(indent)
            text = self.scalars.text(key)
            out.append(text)
            out.append(":")
            self.column += len(text) + 1
            self.whitespace = False
            self.indention = False
            self.node(item, indent, True)

    def sequence(self, value: list[Any], indent: int) -> None:
        """A non-empty block sequence whose dashes are at ``indent``."""
        self.enter(value)
        out = self.out
        for item in value:
            self.write_indent(indent)
            out.append("-")
            self.column += 1
            self.whitespace = False
            self.node(item, indent, False)

    def node(self, value: Any, indent: int, in_mapping: bool) -> None:
        """A mapping value (``in_mapping``) or a sequence item, its parent collection at ``indent``."""
        cls = value.__class__
        if cls is str:
            self.string(self.scalars.text(value), indent + _BEST_INDENT)
        elif cls is dict:
            if value:
                self.mapping(value, indent + _BEST_INDENT)
            else:
                self.flow("{}")
        elif cls is list:
            if value:
                # Under a key a sequence is indentless (libyaml: mapping context, not at an indentation).
                self.sequence(value, indent if in_mapping else indent + _BEST_INDENT)
            else:
                self.flow("[]")
        elif cls is int:
            self.constant(str(value), INT)
        elif cls is bool or value is None:
            self.constant(*_CONSTANTS[value])
        else:
            raise _Declined

    def constant(self, text: str, tag: str) -> None:
        """An int, a boolean or null: plain, as long as it reads back with its own tag."""
        if self.scalars.plain_tag(text) != tag:
            raise _Declined  # PyYAML would write an explicit tag
        self.out.append(text if self.whitespace else " " + text)
        self.column += len(text) + (0 if self.whitespace else 1)
        self.whitespace = False
        self.indention = False

    def flow(self, text: str) -> None:
        self.out.append(text if self.whitespace else " " + text)
        self.column += len(text) + (0 if self.whitespace else 1)
        self.whitespace = False
        self.indention = False

    def string(self, text: str, indent: int) -> None:
        """A scalar's text after a key or a dash, folded at single spaces past column 80 (plain and single-quoted
        scalars fold alike; a quoted one never at its first or last character)."""
        space = 0 if self.whitespace else 1
        if " " not in text or self.column + space + len(text) <= _BEST_WIDTH:
            self.out.append(" " + text if space else text)
            self.column += space + len(text)
        else:
            self.folded(text, indent, space)
        self.whitespace = False
        self.indention = False

    def folded(self, text: str, indent: int, space: int) -> None:
        out = self.out
        if space:
            out.append(" ")
            self.column += 1
        quoted = text[0] == "'"
        if quoted:
            out.append("'")
            self.column += 1
            self.indention = False
            body = text[1:-1].replace("''", "'")
        else:
            body = text
        last = len(body) - 1
        spaces = False
        for at, ch in enumerate(body):
            if ch == " ":
                if (
                    not spaces
                    and self.column > _BEST_WIDTH
                    and not (at < last and body[at + 1] == " ")
                    and not (quoted and (at == 0 or at == last))
                ):
                    self.write_indent(indent)
                else:
                    out.append(" ")
                    self.column += 1
                spaces = True
            else:
                if quoted and ch == "'":
                    out.append("'")
                    self.column += 1
                out.append(ch)
                self.column += 1
                self.indention = False
                spaces = False
        if quoted:
            out.append("'")
            self.column += 1


def emit(value: Any, plain_tag: Callable[[str], str], scalars: _Scalars | None = None) -> str | None:
    """``value`` (a non-empty dict or list) as PyYAML's block-style dump writes it, or None when it holds anything
    this writer leaves to PyYAML. ``plain_tag``: the tag a plain scalar's text resolves to, as the dumper resolves
    it."""
    emitter = _Emitter(scalars or _Scalars(plain_tag))
    try:
        if value.__class__ is dict and value:
            emitter.mapping(value, 0)
        elif value.__class__ is list and value:
            emitter.sequence(value, 0)
        else:
            return None
    except (_Declined, RecursionError):
        return None
    emitter.out.append("\n")
    return "".join(emitter.out)


def scalars(plain_tag: Callable[[str], str]) -> _Scalars:
    """A memory of scalar texts to share between calls of :func:`emit` with the same ``plain_tag``."""
    return _Scalars(plain_tag)
