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
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from celpy import celtypes
from celpy.evaluation import base_functions

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


class _IpNamespace:
    """What the name ``ip`` is in ``ip.isCanonical(text)``: cel-python reads a dotted call as a member call."""


NAMES: dict[str, Any] = {"ip": _IpNamespace()}
"""Activation names the library needs beside ``self`` and ``oldSelf``."""


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
    }
