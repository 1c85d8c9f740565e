"""Kubernetes' CEL extension libraries for quantities, URLs, IPs and CIDRs, as CRD validation rules use them.

Upstream (``k8s.io/apiserver/pkg/cel/library``) adds value types to CEL; here each is a small Python class that
cel-python carries between the library's own functions (``quantity(self.limit).isGreaterThan(quantity('1Gi'))``).
Functions are looked up by name, global and member forms alike (``x.f(a)`` calls ``f(x, a)``), so one name that
upstream gives to two types (``ip(string)`` and ``cidr.ip()``) dispatches on its argument here. A string that does
not parse is an evaluation error, which fails the rule, as upstream.

- quantity: ``quantity``, ``isQuantity``, ``isInteger``, ``asInteger``, ``asApproximateFloat``, ``sign``, ``add``,
  ``sub``, ``isLessThan``, ``isGreaterThan``, ``compareTo``.
- URL: ``url``, ``isURL``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``, ``getEscapedPath``,
  ``getQuery``.
- IP and CIDR: ``ip``, ``isIP``, ``ip.isCanonical``, ``family``, ``isUnspecified``, ``isLoopback``,
  ``isLinkLocalMulticast``, ``isLinkLocalUnicast``, ``isGlobalUnicast``, ``cidr``, ``isCIDR``, ``containsIP``,
  ``containsCIDR``, ``prefixLength``, ``masked``; ``string(x)`` of any of them gives its text.
- format: ``format.named(name)`` (an optional Format) and ``format.<name>()`` for upstream's named formats
  (``dns1123Label``, ``dns1123Subdomain``, ``dns1035Label``, ``qualifiedName``, their ``*Prefix`` forms,
  ``labelValue``, ``uri``, ``uuid``, ``byte``, ``date``, ``datetime``); ``<Format>.validate(s)`` is
  ``optional.none()`` for a valid string, else an optional list of upstream's messages.
- regex: ``find(regex)`` (the first match, or ``''``) and ``findAll(regex[, limit])``, with RE2 (google-re2, what
  cel-python's ``matches`` uses too): linear time, no backtracking, upstream's syntax.
- optional values, as the format library returns them: ``optional.of``, ``optional.none``, ``hasValue``,
  ``value``, ``orValue``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import re2  # type: ignore[import-untyped]
from celpy import celtypes
from celpy.evaluation import base_functions

from berth.cluster import errors, names
from berth.kube import quantity as quantities
from berth.kube.errors import InputError

_BUILTIN_STRING: Callable[[Any], Any] = base_functions["string"]
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Quantity:
    amount: Fraction
    text: str


@dataclass(frozen=True)
class URL:
    parts: urllib.parse.SplitResult
    text: str


@dataclass(frozen=True)
class IP:
    address: ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class CIDR:
    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    address: ipaddress.IPv4Address | ipaddress.IPv6Address


def _quantity(text: Any) -> Quantity:
    try:
        return Quantity(quantities.parse(str(text)), str(text))
    except (InputError, ValueError) as exc:
        raise ValueError(f"quantities must match the regular expression: {text!r} is not a quantity") from exc


def _amount(value: Any) -> Fraction:
    return value.amount if isinstance(value, Quantity) else Fraction(int(value))


def _as_int(value: Any) -> Any:
    if not isinstance(value, Quantity) or value.amount.denominator != 1:
        raise ValueError("cannot convert value to integer")
    n = int(value.amount)
    if not _INT64[0] <= n <= _INT64[1]:
        raise ValueError("cannot convert value to integer: out of range")
    return celtypes.IntType(n)


def _url(text: Any) -> URL:
    raw = str(text)
    parts = urllib.parse.urlsplit(raw)
    # Go's url.ParseRequestURI: an absolute URL or an absolute path; no fragment.
    if not (parts.scheme or raw.startswith("/")) or "#" in raw:
        raise ValueError(f"URL parse error during conversion from string: {raw!r}")
    return URL(parts, raw)


def _ip(value: Any) -> IP:
    if isinstance(value, CIDR):
        return IP(value.address)
    text = str(value)
    try:
        address = ipaddress.ip_address(text)
    except ValueError as exc:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string") from exc
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    if "%" in text:
        raise ValueError(f"IP address {text!r} with zone value is not allowed")
    return IP(address)


def _cidr(text: Any) -> CIDR:
    raw = str(text)
    try:
        interface = ipaddress.ip_interface(raw)
    except ValueError as exc:
        raise ValueError(f"network address parse error during conversion from string: {raw!r}") from exc
    if "/" not in raw:
        raise ValueError(f"network address parse error during conversion from string: {raw!r}")
    return CIDR(interface.network, interface.ip)


def _parses(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def check(text: Any) -> Any:
        try:
            parse(text)
        except ValueError:
            return celtypes.BoolType(False)
        return celtypes.BoolType(True)

    return check


def _string(value: Any) -> Any:
    """CEL's ``string()``, extended to the library's types."""
    if isinstance(value, Quantity):
        return celtypes.StringType(value.text)
    if isinstance(value, URL):
        return celtypes.StringType(value.text)
    if isinstance(value, IP):
        return celtypes.StringType(str(value.address))
    if isinstance(value, CIDR):
        return celtypes.StringType(f"{value.address}/{value.network.prefixlen}")
    return _BUILTIN_STRING(value)


def _ip_or_string(value: Any) -> IP:
    return value if isinstance(value, IP) else _ip(value)


def _contains_cidr(cidr: CIDR, other: Any) -> Any:
    inner = other.network if isinstance(other, CIDR) else _cidr(other).network
    return celtypes.BoolType(inner.version == cidr.network.version and inner.subnet_of(cidr.network))  # type: ignore[arg-type]


class _Namespace:
    """What a library name is in ``ip.isCanonical(text)`` or ``format.named(n)``: cel-python reads a dotted call
    as a member call on it."""

    def __init__(self, name: str) -> None:
        self.name = name


NAMES: dict[str, Any] = {name: _Namespace(name) for name in ("ip", "format", "optional")}
"""Activation names the library needs beside ``self`` and ``oldSelf``."""


@dataclass(frozen=True)
class Optional:
    """CEL's ``optional_type``: a value or none."""

    value: Any = None
    present: bool = False


def _optional_value(opt: Any) -> Any:
    if not isinstance(opt, Optional):
        raise ValueError("no such overload: value() needs an optional")
    if not opt.present:
        raise ValueError("optional.none() dereference")
    return opt.value


@dataclass(frozen=True)
class Format:
    """A named string format of upstream's format library and its check (the problems, none when valid)."""

    name: str
    problems: Callable[[str], list[str]]


_UUID = re.compile(r"(?i)^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([Zz]|[+-]\d{2}:?\d{2})?$"
)


def _uri_problems(text: str) -> list[str]:
    try:
        _url(text)
    except ValueError:
        return [f"parse {errors.go_quote(text)}: invalid URI for request"]
    return []


def _byte_problems(text: str) -> list[str]:
    try:
        base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return ["invalid base64"]
    return []


def _date_problems(text: str) -> list[str]:
    try:
        ok = bool(_DATE.match(text)) and bool(datetime.date.fromisoformat(text))
    except ValueError:
        ok = False
    return [] if ok else ["invalid date"]


def _datetime_problems(text: str) -> list[str]:
    match = _DATETIME.match(text)
    try:
        ok = match is not None and bool(datetime.date.fromisoformat(match.group(1)))
        ok = ok and bool(datetime.time.fromisoformat(match.group(2)[:8])) if match else False
    except ValueError:
        ok = False
    return [] if ok else ["invalid datetime"]


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda text: check(names.mask_trailing_dash(text))


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("dns1123Label", names.is_dns1123_label),
        Format("dns1123Subdomain", names.is_dns1123_subdomain),
        Format("dns1035Label", names.is_dns1035_label),
        Format("qualifiedName", names.is_qualified_name),
        Format("dns1123LabelPrefix", _prefix(names.is_dns1123_label)),
        Format("dns1123SubdomainPrefix", _prefix(names.is_dns1123_subdomain)),
        Format("dns1035LabelPrefix", _prefix(names.is_dns1035_label)),
        Format("labelValue", names.is_label_value),
        Format("uri", _uri_problems),
        Format("uuid", lambda text: [] if _UUID.match(text) else ["does not match the UUID format"]),
        Format("byte", _byte_problems),
        Format("date", _date_problems),
        Format("datetime", _datetime_problems),
    )
}
"""Upstream's ``ConstantFormats`` (k8s.io/apiserver/pkg/cel/library/format.go), checked with berth's name rules."""


def _format_function(fmt: Format) -> Callable[[Any], Format]:
    """``format.dns1123Label()``: the member call on the ``format`` name gives the format."""
    return lambda namespace: fmt


def _named(namespace: Any, name: Any) -> Optional:
    found = FORMATS.get(str(name))
    return Optional(found, found is not None)


def _validate(fmt: Any, text: Any) -> Optional:
    if not isinstance(fmt, Format):
        raise ValueError("no such overload: validate() needs a format")
    problems = fmt.problems(str(text))
    if not problems:
        return Optional()
    return Optional(celtypes.ListType([celtypes.StringType(p) for p in problems]), True)


def _regex(pattern: Any) -> Any:
    try:
        return re2.compile(str(pattern))
    except re2.error as exc:
        raise ValueError(f"invalid regular expression {str(pattern)!r}: {exc}") from exc


def _find(text: Any, pattern: Any) -> Any:
    match = _regex(pattern).search(str(text))
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(text: Any, pattern: Any, limit: Any = -1) -> Any:
    count = int(limit)
    found: list[Any] = []
    for match in _regex(pattern).finditer(str(text)):
        if 0 <= count <= len(found):
            break
        found.append(celtypes.StringType(match.group(0)))
    return celtypes.ListType(found)


def _is_canonical(namespace: Any, text: Any) -> Any:
    address = _ip(text).address
    return celtypes.BoolType(str(address) == str(text))


def _compare(a: Any, b: Any) -> Any:
    x, y = _amount(a), _amount(b)
    return celtypes.IntType((x > y) - (x < y))


def functions() -> dict[str, Callable[..., Any]]:
    """The library's functions by CEL name."""
    return {
        "quantity": _quantity,
        "isQuantity": _parses(_quantity),
        "isInteger": lambda q: celtypes.BoolType(q.amount.denominator == 1),
        "asInteger": _as_int,
        "asApproximateFloat": lambda q: celtypes.DoubleType(float(q.amount)),
        "sign": lambda q: celtypes.IntType((q.amount > 0) - (q.amount < 0)),
        "add": lambda q, other: Quantity(
            q.amount + _amount(other), quantities.canonical(q.amount + _amount(other))
        ),
        "sub": lambda q, other: Quantity(
            q.amount - _amount(other), quantities.canonical(q.amount - _amount(other))
        ),
        "isLessThan": lambda a, b: celtypes.BoolType(_amount(a) < _amount(b)),
        "isGreaterThan": lambda a, b: celtypes.BoolType(_amount(a) > _amount(b)),
        "compareTo": _compare,
        "url": _url,
        "isURL": _parses(_url),
        "getScheme": lambda u: celtypes.StringType(u.parts.scheme),
        "getHost": lambda u: celtypes.StringType(u.parts.netloc.rpartition("@")[2]),
        "getHostname": lambda u: celtypes.StringType(u.parts.hostname or ""),
        "getPort": lambda u: celtypes.StringType("" if u.parts.port is None else str(u.parts.port)),
        "getEscapedPath": lambda u: celtypes.StringType(u.parts.path),
        "getQuery": lambda u: celtypes.MapType(
            {
                celtypes.StringType(k): celtypes.ListType([celtypes.StringType(v) for v in vs])
                for k, vs in urllib.parse.parse_qs(u.parts.query, keep_blank_values=True).items()
            }
        ),
        "ip": _ip,
        "isIP": _parses(_ip),
        "isCanonical": _is_canonical,
        "family": lambda x: celtypes.IntType(x.address.version),
        "isUnspecified": lambda x: celtypes.BoolType(x.address.is_unspecified),
        "isLoopback": lambda x: celtypes.BoolType(x.address.is_loopback),
        "isLinkLocalMulticast": lambda x: celtypes.BoolType(
            x.address.is_multicast
            and x.address in ipaddress.ip_network("224.0.0.0/24" if x.address.version == 4 else "ff02::/16")
        ),
        "isLinkLocalUnicast": lambda x: celtypes.BoolType(
            x.address.is_link_local and not x.address.is_multicast
        ),
        "isGlobalUnicast": lambda x: celtypes.BoolType(
            not (
                x.address.is_unspecified
                or x.address.is_loopback
                or x.address.is_multicast
                or x.address.is_link_local
            )
            and x.address != ipaddress.ip_address("255.255.255.255")
        ),
        "cidr": _cidr,
        "isCIDR": _parses(_cidr),
        "containsIP": lambda c, x: celtypes.BoolType(
            _ip_or_string(x).address.version == c.network.version and _ip_or_string(x).address in c.network
        ),
        "containsCIDR": _contains_cidr,
        "prefixLength": lambda c: celtypes.IntType(c.network.prefixlen),
        "masked": lambda c: CIDR(c.network, c.network.network_address),
        "string": _string,
        "named": _named,
        **{name: _format_function(fmt) for name, fmt in FORMATS.items()},
        "validate": _validate,
        "find": _find,
        "findAll": _find_all,
        "of": lambda namespace, value: Optional(value, True),
        "none": lambda namespace: Optional(),
        "hasValue": lambda opt: celtypes.BoolType(isinstance(opt, Optional) and opt.present),
        "value": _optional_value,
        "orValue": lambda opt, other: opt.value if isinstance(opt, Optional) and opt.present else other,
    }
