"""What a YAML scalar means to Kubernetes: go-yaml v2's resolution, then sigs.k8s.io/yaml's conversion to JSON.

kubectl, the API server and Helm all read YAML through ``sigs.k8s.io/yaml``: go-yaml v2 (``go.yaml.in/yaml/v2``,
a YAML 1.1 reader) decodes into Go values, which are then marshalled to JSON. PyYAML's own resolver differs from
that in many small ways (``y``/``n`` are booleans to Go, ``1e3`` is a float, ``0o17`` and ``1_000`` are ints,
``=`` is a plain string, integral floats print as integers, keys become strings). This module is the one place
those rules live; :mod:`berth.kube.yamlio` applies them to every scalar it reads and consults them when it decides
whether a string may be written unquoted.

The rules follow go-yaml v2's ``resolve.go`` (``resolve``, ``parseTimestamp``) and sigs.k8s.io/yaml's
``convertToJSONableObject``; the pinned kubectl is the oracle in ``tests/kube/test_yamlio_oracle.py``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from typing import Any

TAG_PREFIX = "tag:yaml.org,2002:"
STR = TAG_PREFIX + "str"
INT = TAG_PREFIX + "int"
FLOAT = TAG_PREFIX + "float"
BOOL = TAG_PREFIX + "bool"
NULL = TAG_PREFIX + "null"
TIMESTAMP = TAG_PREFIX + "timestamp"
BINARY = TAG_PREFIX + "binary"
MERGE = TAG_PREFIX + "merge"

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


class ScalarError(ValueError):
    """A scalar Kubernetes' decoder refuses; the message is go-yaml's or encoding/json's, the caller adds the place."""


# The first character decides which rules can apply (go-yaml's resolveTable).
_HINT: dict[str, str] = {"+": "S", "-": "S", ".": "."}
_HINT.update(dict.fromkeys("0123456789", "D"))
_HINT.update(dict.fromkeys("yYnNtTfFoO~", "M"))

# Exact spellings with a fixed meaning (go-yaml's resolveMap). YAML 1.1 booleans include y/n/on/off.
_FIXED: dict[str, tuple[str, Any]] = {}
for _words, _entry in (
    (("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), (BOOL, True)),
    (("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), (BOOL, False)),
    (("", "~", "null", "Null", "NULL"), (NULL, None)),
    ((".nan", ".NaN", ".NAN"), (FLOAT, math.nan)),
    ((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT, math.inf)),
    (("-.inf", "-.Inf", "-.INF"), (FLOAT, -math.inf)),
    (("<<",), (MERGE, "<<")),
):
    _FIXED.update(dict.fromkeys(_words, _entry))

# strconv.ParseInt(s, 0, 64) after go-yaml has removed every underscore: sign, then a 0x/0o/0b prefix, a
# leading 0 (octal) or a decimal.
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_BASES = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}
# go-yaml's yamlStyleFloat, tried on the underscore-free text when ParseInt and ParseUint fail.
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
# strconv.ParseFloat on text that starts with '.': Go float literal syntax, underscores only between digits.
_DOT_FLOAT = re.compile(r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?\Z")
# parseTimestamp's formats: 2006-1-2T15:4:5.999999999Z07:00 (T or t), "2006-1-2 15:4:5.999999999", 2006-1-2.
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d?)-(\d\d?)"
    r"(?:(?:[Tt](\d\d?):(\d\d?):(\d\d?)(?:\.\d+)?(?:Z|[-+]\d\d:\d\d))|(?: (\d\d?):(\d\d?):(\d\d?)(?:\.\d+)?))?\Z"
)
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _timestamp(text: str) -> bool:
    found = _TIMESTAMP.match(text)
    if found is None:
        return False
    year, month, day = int(found[1]), int(found[2]), int(found[3])
    if not 1 <= month <= 12 or not 1 <= day <= _MONTH_DAYS[month - 1]:
        return False
    if month == 2 and day == 29 and not (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        return False
    clock = [int(v) for v in found.groups()[3:] if v is not None]
    return not clock or (clock[0] < 24 and clock[1] < 60 and clock[2] < 60)


def _number(plain: str) -> tuple[str, Any] | None:
    """go-yaml's int/uint/float attempts on underscore-free text (the 'D' and 'S' hints)."""
    found = _GO_INT.match(plain)
    if found is not None:
        sign, digits = found[1], found[2]
        if len(digits) > 1 and digits[0] == "0":
            base = _BASES.get(digits[1], 8)
            value = int(digits[2:] if base != 8 or digits[1] in "oO" else digits[1:], base)
        else:
            value = int(digits)
        signed = -value if sign == "-" else value
        if _INT64_MIN <= signed <= _INT64_MAX:
            return INT, signed
        if not sign and value <= _UINT64_MAX:  # ParseUint takes no sign
            return INT, value
    if _YAML_FLOAT.match(plain):
        number = float(plain)
        if not math.isinf(number):  # ParseFloat's range error: the text stays a string
            return FLOAT, number
    return None


def resolve(text: str, timestamps: bool = False) -> tuple[str, Any]:
    """The tag and value go-yaml gives an untagged plain scalar (timestamps are only told apart when asked)."""
    hint = _HINT.get(text[0]) if text else "M"
    if hint is None:
        return STR, text
    fixed = _FIXED.get(text)
    if fixed is not None:
        return fixed
    if hint == ".":
        if _DOT_FLOAT.match(text):
            number = float(text)
            if not math.isinf(number):
                return FLOAT, number
    elif hint != "M":
        if timestamps and _timestamp(text):
            return TIMESTAMP, text
        found = _number(text.replace("_", "") if "_" in text else text)
        if found is not None:
            return found
    return STR, text


def plain(text: str) -> Any:
    """The value of an untagged plain scalar as Kubernetes stores it (see :func:`json_value`).

    A timestamp stays its text: go-yaml v2 decodes timestamps into an ``interface{}`` as strings.
    """
    if not text:
        return None
    if text[0] not in _HINT:
        return text
    value = resolve(text)[1]
    return json_value(value) if value.__class__ is float or value.__class__ is int else value


def plain_key(text: str) -> str:
    """The JSON object key an untagged plain scalar becomes."""
    if text and text[0] not in _HINT:
        return text
    return json_key(resolve(text)[1])


def short_tag(tag: str) -> str:
    return "!!" + tag[len(TAG_PREFIX) :] if tag.startswith(TAG_PREFIX) else tag


def tagged(tag: str, text: str) -> Any:
    """The Go value of an explicitly tagged scalar (``!!int "3"``, ``!!binary ...``, ``!custom x``)."""
    if tag == STR:
        return text
    if tag == BINARY:
        try:
            data = base64.b64decode("".join(text.split("\n")).replace("\r", ""), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ScalarError("!!binary value contains invalid base64 data") from exc
        return data.decode("utf-8", errors="replace")
    if tag not in (BOOL, INT, FLOAT, NULL, TIMESTAMP):
        return text  # local and unknown tags, and "!", leave the text as it is
    found_tag, value = resolve(text, timestamps=tag == TIMESTAMP)
    if found_tag == tag:
        return text if tag == TIMESTAMP else value
    if tag == FLOAT and found_tag == INT and _INT64_MIN <= value <= _INT64_MAX:
        return float(value)
    raise ScalarError(f"cannot decode {short_tag(found_tag)} `{text}` as a {short_tag(tag)}")


def json_value(value: Any) -> Any:
    """A Go number as Kubernetes stores it after the trip through JSON (unstructured objects, Helm values).

    encoding/json prints an integral float below 1e21 as an integer, and the decoder keeps a number as an int64
    when it parses as one and as a float64 otherwise; NaN and Inf cannot be written at all.
    """
    if value.__class__ is int:
        return value if _INT64_MIN <= value <= _INT64_MAX else float(value)
    if value.__class__ is not float:
        return value
    if not math.isfinite(value):
        name = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise ScalarError(f"json: unsupported value: {name}")
    if value.is_integer() and abs(value) < 1e21:
        # encoding/json prints the shortest digits, padded with zeros: exactly what Python's repr gives
        whole = int(value) if abs(value) < 2**53 else _exact_whole(value)
        if _INT64_MIN <= whole <= _INT64_MAX:
            return whole
    return value


def _exact_whole(value: float) -> int:
    """The integer a float's shortest decimal text names (``1e+20`` is 100000000000000000000, not the float's
    binary value), for floats past 2**53; decimal is imported only here (it costs every process ~1.5 ms)."""
    from decimal import Decimal

    return int(Decimal(repr(value)))


def _float32_g(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 32), as sigs.k8s.io/yaml writes a float map key."""
    if math.isnan(value):
        return ".nan"
    try:
        single = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        single = math.copysign(math.inf, value)
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1.0, single) < 0 else "0"
    for precision in range(1, 10):  # the shortest decimal that reads back as the same float32
        text = f"{single:.{precision - 1}e}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == single:
            break
    mantissa, _, exponent_text = text.partition("e")
    negative = mantissa.startswith("-")
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    exponent = int(exponent_text)
    sign = "-" if negative else ""
    if exponent < -4 or exponent >= 6:  # Go uses %e when the exponent is < -4 or >= 6 for shortest 'g'
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    whole, fraction = digits[: exponent + 1].ljust(exponent + 1, "0"), digits[exponent + 1 :]
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"


def json_key(value: Any) -> str:
    """The JSON object key sigs.k8s.io/yaml makes of a Go map key (bools, ints and floats become strings)."""
    if value.__class__ is str:
        return str(value)
    if value is True or value is False:
        return "true" if value else "false"
    if value.__class__ is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            return str(value)
        raise ScalarError(f"unsupported map key of type: uint64, key: {value:#x}")
    if value.__class__ is float:
        return _float32_g(value)
    if value is None:
        raise ScalarError("unsupported map key of type: %!s(<nil>), key: <nil> (a null key)")
    raise ScalarError(f"invalid map key: {type(value).__name__} (a sequence or mapping cannot be a key)")
