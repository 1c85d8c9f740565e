"""The one YAML loader and dumper for berth: YAML read as Kubernetes reads it.

Every reader of YAML -- chart files and renders, values, simulation files, configs, kubeconfigs, API request
bodies -- goes through :func:`iter_documents` (or a wrapper of it), so the same text means the same thing
everywhere and errors always name the file, document and line.

"As Kubernetes reads it" means what kubectl does with ``-f FILE``: apimachinery's YAMLReader splits the stream at
lines that start with ``---`` (anything after it but a comment is an error); each piece is decoded by
sigs.k8s.io/yaml, i.e. go-yaml v2 (YAML 1.1) and a conversion to JSON. So ``y``/``on`` are true, ``1e3`` is
1000, ``=`` is a string, keys become strings, a later duplicate key wins, ``<<`` merges in place (overwriting
keys set before it), NaN/Inf values are refused and alias expansion is bounded exactly as go-yaml bounds it
("document contains excessive aliasing"), so an alias bomb is refused in milliseconds. Scalar rules live in
:mod:`berth.kube.yamlscalar`; the pinned kubectl is the oracle in ``tests/kube/test_yamlio_oracle.py``.

Parsing uses libyaml through PyYAML's C parser when present (the composer builds the node graph in C); the node
graph is then turned into plain dicts/lists/scalars here, each alias expanded into its own copy as Go does. A large
text (a chart's CRDs) is decoded once and kept as JSON in berth's cache folder, keyed by the decoder's and the
text's SHA-256 (:func:`load_documents`, :func:`load_objects`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from berth.kube import yamlblock, yamlscalar
from berth.kube.errors import InputError

_PLAIN = "!berth/plain"  # the tag our composer gives untagged plain scalars: resolved later, the Go way
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_CParser: Any = getattr(yaml, "cyaml", None) and getattr(yaml.cyaml, "CParser", None)
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# go-yaml v2's alias budget (decode.go: allowedAliasRatio): up to 99% of decoded nodes may come from alias
# expansion for documents up to 400,000 nodes, scaling down to 10% at 4,000,000.
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_LOW:
        return 0.99
    if decodes >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


class _Resolve:
    """Tags for the composer: plain scalars stay unresolved (``_PLAIN``), quoted ones are strings."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else yamlscalar.STR
        return _SEQ if kind is SequenceNode else _MAP

    def descend_resolver(self, parent: Any, index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


class _RedefiningComposer(Composer):
    """PyYAML refuses an anchor defined twice; go-yaml lets the later one win, so this composer does too."""

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()  # type: ignore[attr-defined]
        if not isinstance(event, AliasEvent) and getattr(event, "anchor", None) is not None:
            self.anchors.pop(event.anchor, None)
        return super().compose_node(parent, index)


if _CParser is not None:

    class _FastComposer(_Resolve, _CParser):  # type: ignore[misc]
        """libyaml parses and composes in C."""

    class _SlowComposer(_Resolve, _RedefiningComposer, _CParser):  # type: ignore[misc]
        """Events from libyaml, composed in Python: only for the rare document that redefines an anchor."""

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _RedefiningComposer.__init__(self)

    _COMPOSERS: tuple[Any, ...] = (_FastComposer, _SlowComposer)
else:  # pragma: no cover - PyYAML built without libyaml

    class _PyComposer(
        _Resolve, yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _RedefiningComposer
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            _RedefiningComposer.__init__(self)

    _COMPOSERS = (_PyComposer,)


@dataclass(frozen=True)
class DuplicateKey:
    """A key set twice in one mapping (what strict decoders refuse): ``path`` of the mapping, 1-based ``line``."""

    document: int
    path: str
    key: str
    line: int

    def message(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f'{where}key "{self.key}" already set in map (line {self.line})'


@dataclass(frozen=True)
class Document:
    """One YAML document: its 0-based index among the non-empty documents, first line, and decoded value.

    ``duplicates`` lists keys set twice, filled only when the document was read with ``strict=True``.
    """

    index: int
    line: int
    body: Any
    duplicates: tuple[DuplicateKey, ...] = ()


class _Refused(Exception):
    """A decoding error at a node; turned into an :class:`InputError` with the file, document and line."""

    def __init__(self, message: str, node: Node | None, scalar: bool = False) -> None:
        super().__init__(message)
        self.node = node
        self.scalar = scalar  # a value that cannot be decoded: the message names its field


class _Decoder:
    """Turns one document's node graph into JSON-shaped Python values, as sigs.k8s.io/yaml would.

    Aliases are recognised as nodes met before (the composer shares the node object); each expansion is
    counted the way go-yaml counts it, so the same documents pass and the same ones are refused.
    """

    def __init__(self, document: int, strict: bool, line_offset: int, piece: str) -> None:
        self.document = document
        self.piece = piece
        self.bom = 1 if piece.startswith("\ufeff") else 0
        self.strict = strict
        self.line_offset = line_offset
        self.decodes = 0
        self.aliased = 0
        self.depth = 0  # > 0 while expanding an alias
        self.seen: set[int] = set()
        self.active: set[int] = set()
        self.path: list[str] = []
        self.duplicates: list[DuplicateKey] = []

    # ---- counting and alias bookkeeping ----

    def _count(self, node: Node) -> None:
        self.decodes += 1
        if self.depth:
            self.aliased += 1
            if (
                self.aliased > 100
                and self.decodes > 1000
                and self.aliased / self.decodes > _allowed_alias_ratio(self.decodes)
            ):
                raise _Refused(
                    "document contains excessive aliasing (YAML aliases expand to more than Kubernetes "
                    f"accepts: {self.aliased:,} of {self.decodes:,} nodes came from aliases so far)",
                    node,
                )

    def _enter(self, node: Node) -> bool:
        """Count a collection node; True when it is an alias (entered before), which is counted again."""
        self._count(node)
        nid = id(node)
        if nid in self.seen:
            if nid in self.active:
                raise _Refused("an alias refers to an anchor whose value contains the alias", node)
            self.depth += 1
            self._count(node)
            self.active.add(nid)
            return True
        self.seen.add(nid)
        self.active.add(nid)
        return False

    def _leave(self, node: Node, alias: bool) -> None:
        self.active.discard(id(node))
        if alias:
            self.depth -= 1

    # ---- values ----

    def value(self, node: Node) -> Any:
        if node.__class__ is ScalarNode:
            self._count(node)
            tag = node.tag
            try:
                if tag == _PLAIN:
                    found = yamlscalar.plain(node.value)
                    return found if found.__class__ is str or not self._bang(node) else node.value
                if tag == yamlscalar.STR:
                    if node.style == '"' and "/" in node.value:
                        self._slash(node)
                    return node.value
                return yamlscalar.json_value(yamlscalar.tagged(tag, node.value))
            except yamlscalar.ScalarError as exc:
                raise _Refused(str(exc), node, scalar=True) from None
        alias = self._enter(node)
        if node.__class__ is MappingNode:
            out: Any = {}
            self._fill(node, out, None)
        elif self.strict:
            out = []
            for index, item in enumerate(node.value):
                self.path.append(f"[{index}]")
                out.append(self.value(item))
                self.path.pop()
        else:
            value = self.value
            out = [value(item) for item in node.value]
        self._leave(node, alias)
        return out

    def _bang(self, node: Node) -> bool:
        """Whether a scalar PyYAML calls plain carries the non-specific tag ``!``, which makes it a string in Go.

        libyaml reports ``! 12`` exactly like ``12``; only the source text tells them apart.
        """
        at = node.start_mark.index + self.bom
        if self.piece.startswith("&", at):  # an anchor may come before the tag
            at = _ANCHOR.match(self.piece, at).end()  # type: ignore[union-attr]
        return self.piece.startswith("!", at)

    def _slash(self, node: Node) -> None:
        """libyaml accepts the JSON escape ``\\/`` in double quotes; go-yaml v2 (YAML 1.1) does not."""
        raw = self.piece[node.start_mark.index + self.bom : node.end_mark.index + self.bom]
        if "\\/" in raw and _SLASH_ESCAPE.search(raw):
            raise _Refused("found unknown escape character (\\/ in a double-quoted string)", node)

    def _key(self, node: Node) -> str:
        if node.__class__ is not ScalarNode:
            raise _Refused("invalid map key: a sequence or mapping cannot be a key", node)
        self._count(node)
        tag = node.tag
        try:
            if tag == _PLAIN:
                return node.value if self._bang(node) else yamlscalar.plain_key(node.value)
            if tag == yamlscalar.STR:
                if node.style == '"' and "/" in node.value:
                    self._slash(node)
                return str(node.value)
            return yamlscalar.json_key(yamlscalar.tagged(tag, node.value))
        except yamlscalar.ScalarError as exc:
            raise _Refused(str(exc), node, scalar=True) from None

    def _fill(self, node: Node, out: dict[str, Any], merge_line: int | None) -> None:
        """Set ``node``'s keys into ``out`` in order; a ``<<`` merges in place, as go-yaml v2 does."""
        strict = self.strict
        value = self.value
        for key_node, value_node in node.value:
            if (
                key_node.__class__ is ScalarNode
                and key_node.value == "<<"
                and (key_node.tag == _PLAIN or key_node.tag == yamlscalar.MERGE)
            ):
                self._merge(value_node, out, key_node.start_mark.line + 1 + self.line_offset)
                continue
            key = self._key(key_node)
            if strict:
                if key in out:
                    line = merge_line or key_node.start_mark.line + 1 + self.line_offset
                    self.duplicates.append(
                        DuplicateKey(self.document, "".join(self.path).lstrip("."), key, line)
                    )
                self.path.append(f".{key}")
                out[key] = value(value_node)
                self.path.pop()
            else:
                out[key] = value(value_node)

    def _merge(self, node: Node, out: dict[str, Any], line: int) -> None:
        if node.__class__ is MappingNode:
            self._merge_one(node, out, line)
            return
        if (
            node.__class__ is SequenceNode and id(node) not in self.seen
        ):  # an inline list, not an alias to one
            self.seen.add(id(node))
            for item in reversed(node.value):  # earlier maps take precedence, so they are set last
                if item.__class__ is not MappingNode:
                    break
                self._merge_one(item, out, line)
            else:
                return
        raise _Refused("map merge requires map or sequence of maps as the value", node)

    def _merge_one(self, node: Node, out: dict[str, Any], line: int) -> None:
        alias = self._enter(node)
        self._fill(node, out, line)
        self._leave(node, alias)


_SEPARATOR = re.compile(r"^---(.*)$", re.MULTILINE)


def _pieces(text: str, source: str, line_offset: int) -> Iterator[tuple[int, str]]:
    """The stream split as apimachinery's YAMLReader splits it: ``(first line index, text)`` per piece."""
    start, start_line = 0, line_offset  # where the current piece begins, and its line index
    position, line = 0, line_offset  # the last separator found, and its line index
    for found in _SEPARATOR.finditer(text):
        line += text.count("\n", position, found.start())
        position = found.start()
        rest = found[1].strip()
        if rest and not rest.startswith("#"):
            raise InputError(
                f"invalid YAML document separator: {rest!r} follows '---' (only a comment may; "
                "put the content on the next line)",
                _where(source, line=line + 1),
            )
        if found.start() > start:
            yield start_line, text[start : found.start()]
        start, start_line = found.end() + 1, line + 1
    if start < len(text):
        yield start_line, text[start:]


def _where(source: str, index: int | None = None, line: int | None = None) -> str:
    parts = [source]
    if index is not None:
        parts.append(f"document {index + 1}")
    if line is not None:
        parts.append(f"line {line}")
    return ", ".join(parts)


def _compose(piece: str, first_line: int, source: str, index: int) -> tuple[Node | None, str]:
    """The first document of one piece (go-yaml's Unmarshal reads only the first), as a node graph.

    Returns the piece as parsed: a ``\\'`` escape in a double-quoted scalar, which go-yaml accepts and libyaml
    does not, is rewritten to ``\\x27`` first.
    """
    composers = iter(_COMPOSERS)
    composer_class = next(composers)
    while True:
        composer = composer_class(piece)
        try:
            return (composer.get_node() if composer.check_node() else None), piece
        except yaml.MarkedYAMLError as exc:
            if isinstance(exc, yaml.composer.ComposerError) and "duplicate anchor" in str(exc):
                composer_class = next(composers, None)
                if composer_class is not None:
                    continue
            rewritten = _quote_escape(piece, exc)
            if rewritten is None:
                raise _malformed(exc, first_line, source, index) from exc
            piece = rewritten
        except yaml.YAMLError as exc:
            raise InputError(f"malformed YAML: {exc}", _where(source, index)) from exc
        except RecursionError as exc:
            raise InputError("malformed YAML: nested too deeply", _where(source, index)) from exc


def _quote_escape(piece: str, exc: yaml.MarkedYAMLError) -> str | None:
    mark = exc.problem_mark
    if exc.problem != "found unknown escape character" or mark is None:
        return None
    at = mark.index + (1 if piece.startswith("\ufeff") else 0)  # libyaml does not count the BOM
    return piece[:at] + "\\x27" + piece[at + 2 :] if piece[at : at + 2] == "\\'" else None


_ANCHOR = re.compile(r"&\S*\s*")
_SLASH_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\/")


def _malformed(exc: yaml.MarkedYAMLError, first_line: int, source: str, index: int) -> InputError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 + first_line if mark is not None else None
    return InputError(f"malformed YAML: {exc.problem or exc}", _where(source, index, line))


_JSON_START = re.compile(r"\s*\{")
_WHITESPACE_LINE = re.compile(r"[^\S\n]*\n?")


class _NotJSON(ValueError):
    """Text the JSON reader refuses as syntax: kubectl then reads the rest of the stream as YAML."""


def _json_float(text: str) -> Any:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"cannot unmarshal number {text} into Go value of type float64")
    return yamlscalar.json_value(number)


def _json_constant(name: str) -> Any:
    raise _NotJSON(f"invalid character in a value: {name}")


def _json_documents(text: str, source: str, strict: bool) -> Iterator[Document]:
    """A stream of JSON values, read as apimachinery's YAMLOrJSONDecoder reads input that starts with ``{``.

    When the first or second value is not JSON, the decoder goes back to the end of the last value it read
    (and past the rest of that line's whitespace) and reads the remainder as YAML, so ``{a: 1}`` is a YAML
    flow mapping; after two JSON values it is a JSON stream and bad syntax is an error.
    """
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if strict and len(out) < len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    duplicates.append(key)
                seen.add(key)
        return out

    decoder = json.JSONDecoder(
        parse_int=lambda digits: yamlscalar.json_value(int(digits)),
        parse_float=_json_float,
        parse_constant=_json_constant,
        object_pairs_hook=pairs,
    )
    consumed, index, end = 0, 0, len(text)
    while True:
        position = consumed
        while position < end and text[position].isspace():
            position += 1
        if position >= end:
            return
        line = text.count("\n", 0, position) + 1
        try:
            body, consumed = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, _NotJSON) as exc:
            if index > 1:
                problem = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                at = exc.lineno if isinstance(exc, json.JSONDecodeError) else line
                raise InputError(f"malformed JSON: {problem}", _where(source, index, at)) from None
            rest = _WHITESPACE_LINE.match(text, consumed)
            start = rest.end() if rest is not None else consumed
            yield from _yaml_documents(text[start:], source, strict, text.count("\n", 0, start), index)
            return
        except ValueError as exc:
            raise InputError(f"JSON: {exc}", _where(source, index, line)) from None
        found = tuple(DuplicateKey(index, "", key, line) for key in duplicates)
        duplicates.clear()
        if body is not None:
            yield Document(index, line, body, found)
        index += 1


def _refused_field(decoder: _Decoder, node: Node) -> str:
    """``"a.b[0].c: "``, the field a refused value sits at ("" at the top), so the message names it as well as the
    line. A non-strict decoder keeps no path (it is the fast one), so a refusal is decoded again strictly here."""
    if not decoder.path:
        with contextlib.suppress(_Refused):
            decoder.value(node)
    field = "".join(decoder.path).lstrip(".")
    return f"{field}: " if field else ""


def _yaml_documents(text: str, source: str, strict: bool, line_offset: int, index: int) -> Iterator[Document]:
    for first_line, piece in _pieces(text, source, line_offset):
        node, piece = _compose(piece, first_line, source, index)
        if node is None:
            continue
        line = node.start_mark.line + 1 + first_line
        decoder = _Decoder(index, strict, first_line, piece)
        try:
            body = decoder.value(node)
        except _Refused as exc:
            at = exc.node.start_mark.line + 1 + first_line if exc.node is not None else line
            field = (
                _refused_field(decoder if strict else _Decoder(index, True, first_line, piece), node)
                if exc.scalar
                else ""
            )
            raise InputError(f"YAML: {field}{exc}", _where(source, index, at)) from None
        except RecursionError as exc:
            raise InputError("YAML: nested too deeply", _where(source, index, line)) from exc
        if body is not None:
            yield Document(index, line, body, tuple(decoder.duplicates))
        index += 1


def iter_documents(text: str, source: str = "<input>", strict: bool = False) -> Iterator[Document]:
    """Yield every non-empty document in ``text``, decoded as Kubernetes decodes it.

    Bad input raises :class:`InputError` naming ``source``, the document and the line. With ``strict`` each
    document also lists the keys it sets twice (including through ``<<``), which Kubernetes' strict decoders
    (component configs such as KubeSchedulerConfiguration) refuse.
    """
    if _JSON_START.match(text):
        return _json_documents(text, source, strict)
    return _yaml_documents(text, source, strict, 0, 0)


def load_documents(text: str, source: str = "<input>", strict: bool = False) -> list[Document]:
    """All non-empty documents of a YAML stream (``---`` separated); a large one through :func:`_cached`."""
    cached = None if strict else _cached(text, source)
    return cached if cached is not None else list(iter_documents(text, source, strict))


CACHE_MIN_CHARS = 16 * 1024
"""Texts this long or longer are decoded through the cache (:func:`_cached`): ~0.7 ms of decoding and more."""
CACHE_FOLDER = "yaml-documents"
CACHE_MAX_BYTES = 64 * 1024 * 1024
"""The cache keeps its newest entries up to about this size."""


@functools.cache
def _decoder_id() -> str:
    """What decides how a text decodes: this module's and the scalar rules' source, PyYAML's version and whether
    libyaml parses. Part of every cache key, so a changed decoder never reads an older one's results. Empty when
    the sources cannot be read (the cache is then off)."""
    h = hashlib.sha256(f"{yaml.__version__} {_CParser is not None}".encode())
    for module_file in (__file__, yamlscalar.__file__):
        try:
            h.update(Path(module_file).read_bytes())
        except (OSError, TypeError):
            return ""
    return h.hexdigest()


def _cached(text: str, source: str) -> list[Document] | None:
    """The documents of a large text (:data:`CACHE_MIN_CHARS`) from an on-disk cache keyed by the SHA-256 of the
    decoder (:func:`_decoder_id`) and the text, else decoded and stored. A chart's large CRDs come back unchanged
    in every setup and upgrade; a JSON read of the decoded documents is ~30 times faster than decoding them again
    (the decoder walks libyaml's node graph in Python to get Kubernetes' exact reading). None when the text is
    small or does not decode (the caller decodes it and raises its error); a cache that cannot be read or written
    is only a miss."""
    if len(text) < CACHE_MIN_CHARS:
        return None
    decoder = _decoder_id()
    if not decoder:
        return None
    from berth.kube import tools  # the cache's place; not needed for small texts

    key = hashlib.sha256(decoder.encode() + b"\0" + text.encode("utf-8", "surrogatepass")).hexdigest()
    folder = tools.cache_dir() / CACHE_FOLDER
    path = folder / f"{key}.json"
    try:
        entries = json.loads(path.read_bytes())
        return [Document(int(i), int(line), body) for i, line, body in entries]
    except (OSError, ValueError, TypeError):
        pass
    try:
        docs = list(iter_documents(text, source))
    except InputError:
        return None
    with contextlib.suppress(OSError):
        data = json.dumps([[d.index, d.line, d.body] for d in docs], separators=(",", ":")).encode()
        _store(folder, path, data)
    return docs


def _store(folder: Path, path: Path, data: bytes) -> None:
    """Write one cache entry whole (a reader sees all of it or none), then keep the folder under
    :data:`CACHE_MAX_BYTES` by removing its oldest entries."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".entry.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    entries = []
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError):
            st = entry.stat()
            entries.append((st.st_mtime_ns, st.st_size, entry.path))
    total = sum(size for _, size, _ in entries)
    for _, size, old in sorted(entries):
        if total <= CACHE_MAX_BYTES:
            break
        with contextlib.suppress(OSError):
            os.unlink(old)
        total -= size


def duplicate_keys(text: str) -> list[DuplicateKey]:
    """Every key set twice in ``text``; malformed or refused YAML yields what was found before the problem."""
    out: list[DuplicateKey] = []
    try:
        for doc in iter_documents(text, strict=True):
            out.extend(doc.duplicates)
    except InputError:
        return out
    return out


def load_objects(text: str, source: str = "<input>") -> list[tuple[Document, dict[str, Any]]]:
    """Documents that must each be a Kubernetes object (a mapping with ``kind``).

    ``kind: List`` documents are flattened into their items, as kubectl does.
    """
    out: list[tuple[Document, dict[str, Any]]] = []
    cached = _cached(text, source)
    for doc in cached if cached is not None else iter_documents(text, source):
        body = doc.body
        if not isinstance(body, dict):
            raise InputError(
                f"expected a Kubernetes object (a mapping), got {type(body).__name__}",
                _where(source, doc.index, doc.line),
            )
        if not body.get("kind"):
            raise InputError(
                "object has no 'kind'; every document must be a Kubernetes object",
                _where(source, doc.index, doc.line),
            )
        if body.get("kind") == "List" and isinstance(body.get("items"), list):
            for item in body["items"]:
                if isinstance(item, dict):
                    out.append((doc, item))
            continue
        out.append((doc, body))
    return out


def load_file(path: str | os.PathLike[str], strict: bool = False) -> list[Document]:
    """Read and parse a YAML file; a missing or unreadable file is an :class:`InputError` naming it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError("file not found", str(p)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", str(p)) from exc
    return load_documents(text, str(p), strict)


def load_one(text: str, source: str = "<input>") -> Any:
    """Exactly one document (or None for an empty stream)."""
    docs = load_documents(text, source)
    if len(docs) > 1:
        raise InputError(f"expected one YAML document, found {len(docs)}", source)
    return docs[0].body if docs else None


# ---- writing ----


class _Dumper(_BaseDumper):  # type: ignore[misc]
    """The safe dumper, with two changes.

    Multi-line strings (embedded configs, scripts) are written as readable ``|`` blocks, and a string is left
    unquoted only when both Kubernetes' reader and PyYAML's read it back as that string (``y``, ``1e3``, ``0o7``
    and ``2001-12-14`` are quoted).
    """

    def represent_data(self, data: Any) -> Any:
        """PyYAML's, with a plain ``str`` first: strings are ~90 % of the nodes of every document berth writes (a
        manifest index, a plan), and PyYAML's general path for one (alias check, type lookup, two calls) was a
        third of the time of writing it. The node is exactly the one :func:`_represent_str` makes."""
        if data.__class__ is str:
            self.alias_key = None  # as PyYAML sets it for a value that is never an alias
            return ScalarNode(yamlscalar.STR, data, style="|" if "\n" in data else self.default_style)
        return super().represent_data(data)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)
        return _scalar_tag(value, implicit)


_SCALAR_TAGS: dict[tuple[Any, Any], Any] = {}
"""The tag each scalar resolves to when written: a function of its text alone (this dumper has no path resolvers),
asked for every scalar of every document; PyYAML's own resolution runs a regex per implicit type (the bulk of the
time of writing a plan or a manifest index)."""

_PYYAML_RESOLVER: Any = yaml.resolver.Resolver()
"""The dumper's own resolver (:class:`_Dumper` adds no implicit resolvers to PyYAML's)."""


def _scalar_tag(value: Any, implicit: Any) -> Any:
    """The tag the dumper gives a scalar of this text: Kubernetes' reading first (a plain scalar that Go reads as
    anything but a string is quoted), then PyYAML's; remembered in :data:`_SCALAR_TAGS`."""
    key = (value, implicit)
    tag = _SCALAR_TAGS.get(key)
    if tag is None:
        if implicit[0]:
            tag = yamlscalar.resolve(value, timestamps=True)[0]
        if tag is None or tag == yamlscalar.STR:
            tag = _PYYAML_RESOLVER.resolve(ScalarNode, value, implicit)
        if len(_SCALAR_TAGS) >= 50_000:
            _SCALAR_TAGS.clear()
        _SCALAR_TAGS[key] = tag
    return tag


_PLAIN_IMPLICIT = (True, False)


def _plain_tag(text: str) -> str:
    """The tag a plain (unquoted) scalar of this text is written with: a string is written plain only if its tag is
    the string tag."""
    tag: str = _scalar_tag(text, _PLAIN_IMPLICIT)
    return tag


_BLOCK_SCALARS = yamlblock.scalars(_plain_tag)


def _represent_str(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value else None  # PyYAML falls back to quotes where a block cannot hold the text
    return dumper.represent_scalar(yamlscalar.STR, value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(obj: Any) -> str:
    """Block-style YAML with keys in insertion order (Kubernetes readers prefer apiVersion/kind first). Plain data
    (the indexes, plans and specs berth writes) is written by :mod:`berth.kube.yamlblock`, the same bytes several
    times faster; anything else by PyYAML."""
    text = yamlblock.emit(obj, _plain_tag, _BLOCK_SCALARS)
    if text is not None:
        return text
    return _pyyaml_dump(obj)


def _pyyaml_dump(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def dump_all(objs: Iterable[Any]) -> str:
    """A ``---`` separated multi-document stream."""
    return yaml.dump_all(
        list(objs), Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


def write_atomic(path: str | os.PathLike[str], text: str | bytes, mode: int = 0o644) -> None:
    """Write a file so readers see the old content or the new, never a half-written one.

    An ``OSError`` (a full or read-only disk, a parent that is a regular file) names ``path``, not the temporary
    file beside it, so the CLI's message points at what the user gave.
    """
    p = Path(path)
    tmp = ""
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=str(p.parent))
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException as exc:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and (exc.filename is None or _is_temporary(str(exc.filename), p)):
            raise OSError(exc.errno, exc.strerror, str(p)) from exc
        raise


def _is_temporary(name: str, target: Path) -> bool:
    return Path(name).parent == target.parent and Path(name).name.startswith(f".{target.name}.")
