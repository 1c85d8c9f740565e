"""Decode the protobuf request bodies real clients send, into the JSON-equivalent dicts the server works on.

Why: kubectl 1.35 sends ``kubectl create configmap|secret|namespace|serviceaccount|deployment|job|...``, ``kubectl
create token``, ``kubectl autoscale`` and ``kubectl auth can-i`` bodies as ``application/vnd.kubernetes.protobuf``;
``kubectl create job --from=cronjob/NAME`` sends the CronJob's whole job template as a Job, and ``kubectl debug
node/NODE`` and ``kubectl debug POD --copy-to=NAME`` send a whole v1 Pod. Helm 4 writes its release Secrets and
uninstall DeleteOptions that way. There is no JSON fallback, so a server that answers 415 breaks those commands.
Schedulers and controllers written in Go (client-go defaults to protobuf for built-in kinds) send Bindings, Events,
Leases and Evictions the same way. We decode a fixed set of kinds (:data:`KINDS`); every other kind gets a 415 that
says to send JSON. Everything reachable from a PodSpec is in the tables, so a pod template is never cut short.

Wire format (k8s.io/apimachinery ``runtime/serializer/protobuf``): the bytes ``k8s\\0`` then a ``runtime.Unknown``
{1 typeMeta {1 apiVersion, 2 kind}, 2 raw (the object message), 3 contentEncoding, 4 contentType}. Field numbers
below come from k8s.io/api ``generated.proto`` (core/v1, batch/v1, apps/v1, ... as of Kubernetes 1.35) and were
checked against bodies captured from kubectl 1.35.2 (the fixtures under tests/cluster/fixtures/protobuf/).

Go's generated marshallers write every non-pointer field, even when empty, so an empty string, zero or empty
message means "unset" unless the field is a pointer in Go, or its JSON tag has no ``omitempty`` so JSON shows the
zero too (``keep`` below): ``replicas: 0``, ``gracePeriodSeconds: 0``, ``emptyDir: {}`` and ``iscsi.lun: 0`` must
survive. Repeated fields keep their empty elements (``apiGroups: [""]``).

Unknown field numbers: an empty one (zero, empty bytes, or a message of nothing but empty fields, which is how Go
writes an unset non-pointer struct such as a Deployment's status on create) carries no data and is skipped. A
non-empty one would be lost silently, so it is refused with a 415 that names the message and field number and says
to send the object as JSON (``kubectl apply -f``) instead.

The message tables (field numbers, names, types) are in ``protobuf_messages.py``.

Pure: bytes in, dict out; :class:`berth.cluster.errors.ApiError` on failure.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from berth.cluster import errors
from berth.cluster.protobuf_messages import KINDS, MESSAGES, VERSIONED_KINDS, F, T, supported_kinds

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


def is_protobuf(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` header names the Kubernetes protobuf encoding."""
    return (content_type or "").split(";", 1)[0].strip().lower() == CONTENT_TYPE


# --------------------------------------------------------------------------------------------------------------
# Wire reader
# --------------------------------------------------------------------------------------------------------------

VARINT, I64, LEN, I32 = 0, 1, 2, 5


class _WireError(ValueError):
    pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise _WireError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _WireError("varint longer than 10 bytes")


def fields(buf: bytes) -> list[tuple[int, int, int | bytes]]:
    """Split one message into (field number, wire type, value) in wire order (a tiny protobuf reader)."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _WireError("field number 0")
        value: int | bytes
        if wire == VARINT:
            value, pos = _varint(buf, pos)
        elif wire == LEN:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise _WireError("truncated length-delimited field")
            value = buf[pos : pos + length]
            pos += length
        elif wire == I64:
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == I32:
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise _WireError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


# --------------------------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------------------------


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: int | bytes, where: str) -> str:
    if not isinstance(value, bytes):
        raise _WireError(f"{where}: expected a length-delimited string")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _WireError(f"{where}: invalid UTF-8") from exc


def _blob(value: int | bytes, where: str) -> bytes:
    if not isinstance(value, bytes):
        raise _WireError(f"{where}: expected length-delimited bytes")
    return value


def _time(buf: bytes, micro: bool = False) -> str | None:
    seconds = nanos = 0
    for number, _, value in fields(buf):
        if number == 1 and isinstance(value, int):
            seconds = _signed(value)
        elif number == 2 and isinstance(value, int):
            nanos = _signed(value)
    if seconds == 0 and nanos == 0:
        return None
    moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(buf: bytes) -> int | str:
    kind = 0
    int_val = 0
    str_val = ""
    for number, _, value in fields(buf):
        if number == 1 and isinstance(value, int):
            kind = value
        elif number == 2 and isinstance(value, int):
            int_val = _signed(value)
        elif number == 3:
            str_val = _text(value, "IntOrString.strVal")
    return str_val if kind == 1 else int_val


def _quantity(buf: bytes) -> str:
    for number, _, value in fields(buf):
        if number == 1:
            return _text(value, "Quantity.string")
    return "0"


def _map_entry(buf: bytes) -> tuple[bytes, bytes]:
    key = b""
    val = b""
    for number, _, value in fields(buf):
        if number == 1:
            key = _blob(value, "map key")
        elif number == 2:
            val = _blob(value, "map value")
    return key, val


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value is False or value == {} or value == []


def _carries_data(value: int | bytes) -> bool:
    """Whether an unknown field holds anything: Go writes every non-pointer field, so an empty struct arrives as a
    message of zeros and empty strings (a Deployment's status on create), and only non-zero content is data."""
    if isinstance(value, int):
        return value != 0
    if not value:
        return False
    try:
        inner = fields(value)
    except _WireError:
        return True  # not a message: a non-empty string or bytes
    return any(_carries_data(item) for _, _, item in inner)


def _scalar(spec: F, wire: int, value: int | bytes, where: str) -> Any:
    t = spec.type
    if t is T.STRING:
        return _text(value, where)
    if t is T.BYTES:
        return base64.b64encode(_blob(value, where)).decode("ascii")
    if t is T.INT:
        if not isinstance(value, int):
            raise _WireError(f"{where}: expected a varint")
        return _signed(value)
    if t is T.BOOL:
        if not isinstance(value, int):
            raise _WireError(f"{where}: expected a varint")
        return bool(value)
    if t is T.TIME:
        return _time(_blob(value, where))
    if t is T.MICRO_TIME:
        return _time(_blob(value, where), micro=True)
    if t is T.INT_OR_STRING:
        return _int_or_string(_blob(value, where))
    if t is T.QUANTITY:
        return _quantity(_blob(value, where))
    if t is T.RAW_JSON:
        raw = b""
        for number, _, inner in fields(_blob(value, where)):
            if number == 1:
                raw = _blob(inner, where)
        return json.loads(raw) if raw else {}
    if t is T.MESSAGE:
        return decode_message(spec.message, _blob(value, where), where)
    raise _WireError(f"{where}: unsupported field type {t.value}")


def decode_message(message: str, buf: bytes, where: str = "") -> dict[str, Any]:
    """Decode one message of the table into its JSON form (empty non-pointer fields dropped)."""
    table = MESSAGES[message]
    out: dict[str, Any] = {}
    for number, wire, value in fields(buf):
        spec = table.get(number)
        if spec is None:
            if _carries_data(value):
                raise errors.unsupported_media_type(
                    f"cannot decode protobuf field {number} of {message} (at {where or message}): this server does "
                    "not know that field and would lose its value; send the object as JSON instead "
                    "(kubectl apply -f, or Content-Type: application/json)"
                )
            continue
        here = f"{where}.{spec.name}" if spec.name else where
        if spec.type is T.INLINE:
            out.update(decode_message(spec.message, _blob(value, here), here))
            continue
        if spec.type in (T.MAP_STRING, T.MAP_BYTES, T.MAP_QUANTITY):
            key, raw = _map_entry(_blob(value, here))
            entries = out.setdefault(spec.name, {})
            name = key.decode("utf-8", errors="replace")
            if spec.type is T.MAP_STRING:
                entries[name] = raw.decode("utf-8", errors="replace")
            elif spec.type is T.MAP_BYTES:
                entries[name] = base64.b64encode(raw).decode("ascii")
            else:
                entries[name] = _quantity(raw)
            continue
        if spec.repeated and spec.type is T.INT and wire == LEN:
            # packed repeated varints
            packed = _blob(value, here)
            pos = 0
            while pos < len(packed):
                item, pos = _varint(packed, pos)
                out.setdefault(spec.name, []).append(_signed(item))
            continue
        decoded = _scalar(spec, wire, value, here)
        if spec.repeated:
            out.setdefault(spec.name, []).append(decoded)
        elif (spec.keep and decoded is not None) or not _empty(decoded):
            out[spec.name] = decoded
        else:
            out.pop(spec.name, None)
    return out


def decode(body: bytes) -> dict[str, Any]:
    """Decode a ``application/vnd.kubernetes.protobuf`` request body into the equivalent JSON object.

    Raises:
        ApiError 400: not a Kubernetes protobuf envelope, or a malformed message.
        ApiError 415: a kind this server does not decode (the message names the kinds it does and says to use JSON).
    """
    if not body.startswith(MAGIC):
        raise errors.bad_request(
            "protobuf body does not start with the Kubernetes envelope prefix 'k8s\\x00'; send JSON instead"
        )
    try:
        api_version = kind = ""
        raw = b""
        encoding = ""
        for number, _, value in fields(body[len(MAGIC) :]):
            if number == 1:
                for inner, _, item in fields(_blob(value, "typeMeta")):
                    if inner == 1:
                        api_version = _text(item, "typeMeta.apiVersion")
                    elif inner == 2:
                        kind = _text(item, "typeMeta.kind")
            elif number == 2:
                raw = _blob(value, "raw")
            elif number == 3:
                encoding = _text(value, "contentEncoding")
        if encoding:
            raise errors.unsupported_media_type(
                f"protobuf body with contentEncoding {encoding!r} is not supported"
            )
        group = api_version.rpartition("/")[0]
        message = (
            "DeleteOptions"
            if kind == "DeleteOptions"
            else VERSIONED_KINDS.get((api_version, kind)) or KINDS.get((group, kind))
        )
        if message is None:
            raise errors.unsupported_media_type(
                f"cannot decode {api_version or '<no apiVersion>'} {kind or '<no kind>'} from protobuf: this server "
                f"decodes protobuf only for {', '.join(supported_kinds())}; send the object as JSON "
                "(Content-Type: application/json)"
            )
        obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
        obj.update(decode_message(message, raw, kind))
        return obj
    except _WireError as exc:
        raise errors.bad_request(f"malformed protobuf body: {exc}") from exc


def decode_json_equivalent(body: bytes, content_type: str | None) -> Mapping[str, Any] | None:
    """Convenience for the HTTP layer: the decoded object when ``content_type`` is protobuf, else None."""
    return decode(body) if is_protobuf(content_type) else None
