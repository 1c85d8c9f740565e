"""Kubernetes resource quantities (``100m``, ``500Mi``, ``1.5``, ``2e3``) as exact fractions.

Upstream keeps quantities exact and rounds *up* when asked for an integer (``Value()``/``MilliValue()``);
the scheduler works in millicores for cpu and in bytes (plain units) for everything else. We mirror that.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from berth.kube.errors import InputError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_PATTERN = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$")

_cache: dict[str, Fraction] = {}


def parse(value: str | int | float, where: str | None = None) -> Fraction:
    """Parse a quantity; raises :class:`InputError` naming ``where`` on a malformed value."""
    if isinstance(value, bool):
        raise InputError(
            f"invalid quantity {value!r}: expected a number or a string like '100m' or '1Gi'", where
        )
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    if not isinstance(value, str):
        raise InputError(
            f"invalid quantity {value!r}: expected a number or a string like '100m' or '1Gi'", where
        )
    cached = _cache.get(value)
    if cached is not None:
        return cached
    m = _PATTERN.match(value.strip())
    if not m:
        raise InputError(
            f"invalid quantity {value!r}: quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (e.g. '100m', '2', '1.5Gi')",
            where,
        )
    sign, number, suffix, exponent = m.groups()
    amount = Fraction(number)
    if exponent is not None:
        amount *= Fraction(10) ** int(exponent)
    elif suffix in _BINARY:
        amount *= _BINARY[suffix]
    else:
        amount *= _DECIMAL[suffix or ""]
    if sign == "-":
        amount = -amount
    if len(_cache) < 100_000:
        _cache[value] = amount
    return amount


def value(q: str | int | float, where: str | None = None) -> int:
    """Integer value rounded up (upstream ``Quantity.Value``): bytes for memory, counts for pods."""
    return math.ceil(parse(q, where))


def milli_value(q: str | int | float, where: str | None = None) -> int:
    """Thousandths rounded up (upstream ``Quantity.MilliValue``): millicores for cpu."""
    return math.ceil(parse(q, where) * 1000)


def resource_amount(resource: str, q: str | int | float, where: str | None = None) -> int:
    """The integer the scheduler uses for ``resource``: millicores for cpu, plain value otherwise."""
    return milli_value(q, where) if resource == "cpu" else value(q, where)


def format_amount(resource: str, amount: int) -> str:
    """Render an integer amount back to a readable quantity string (cpu in m, memory in Mi when exact)."""
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    for suffix in ("Gi", "Mi", "Ki"):
        unit = _BINARY[suffix]
        if amount and amount % unit == 0:
            return f"{amount // unit}{suffix}"
    return str(amount)


# Suffixes largest first, for printing (parse uses the tables above).
_BINARY_DESC = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL_DESC = (
    ("E", 18),
    ("P", 15),
    ("T", 12),
    ("G", 9),
    ("M", 6),
    ("k", 3),
    ("", 0),
    ("m", -3),
    ("u", -6),
    ("n", -9),
)


def canonical(value: Fraction, binary: bool = False) -> str:
    """A quantity as upstream prints it: ``1Gi`` for binary amounts that divide evenly, else the largest decimal
    suffix that keeps the number whole (``1500m``, ``2``, ``3k``)."""
    if value == 0:
        return "0"
    if binary and value.denominator == 1 and abs(value) >= 1024:  # below 1024 upstream prints decimal
        for suffix, unit in _BINARY_DESC:
            if value % unit == 0:
                return f"{value // unit}{suffix}"
        return str(value.numerator)
    for suffix, exp in _DECIMAL_DESC:
        scaled = value / (Fraction(10) ** exp)
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return f"{float(value)}"
