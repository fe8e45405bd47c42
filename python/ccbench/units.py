"""Units of the experiment spec: rates, durations and sizes written as text.

Every quantity a user writes carries its unit, and parsing turns it into an exact
integer in the engine's base unit (the same units as ``crates/ccsim/src/units.rs``):

=========  =============================  ==========================================
kind       base unit                      accepted forms (examples)
=========  =============================  ==========================================
rate       bit/s (``int``)                ``"100Mbit"``, ``"10Gbps"``, ``"1Gbit/s"``,
                                          ``"500kbit"``, ``"2.5Gb/s"``, ``"64000bps"``
duration   nanoseconds (``int``)          ``"62ms"``, ``"1.5s"``, ``"200us"``,
                                          ``"200µs"``, ``"10ns"``, ``"2min"``
size       bytes, packets or BDP          ``"1500B"``, ``"3MB"``, ``"64KiB"``,
           multiples (:class:`Size`)      ``"900pkt"``, ``"2BDP"``, ``"0.5bdp"``
=========  =============================  ==========================================

Prefix convention (stated once, used everywhere): **decimal prefixes are powers of
ten** (k = 10^3, M = 10^6, G = 10^9, T = 10^12, so ``"3MB"`` is 3 000 000 bytes and
``"100Mbit"`` is 100 000 000 bit/s), **binary prefixes are powers of two** (KiB =
1024, MiB = 1024², GiB = 1024³). Rates are always in *bits* per second: byte rates
(``"10MB/s"``) are rejected rather than guessed. Numbers are parsed as decimals, so
``"0.1s"`` is exactly 100 000 000 ns; a value that is not a whole number of base
units (``"0.5ns"``, ``"1.5B"``) is an error. The bare number ``0`` is accepted for any
rate or duration; every other value needs a unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

__all__ = [
    "Size",
    "format_duration",
    "format_rate",
    "parse_duration",
    "parse_rate",
    "parse_size",
    "NS_PER_SEC",
]

NS_PER_SEC = 1_000_000_000

_NUMBER = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*(\S*?)\s*$")

_DECIMAL_PREFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}

RATE_FORMS = "a number with a bit-rate unit: bit, bps, bit/s or b/s with an optional k/M/G/T prefix, e.g. '100Mbit', '10Gbps', '1Gbit/s' (tc's '100mbit' too)"
DURATION_FORMS = "a number with a time unit: ns, us (or µs), ms, s, min, e.g. '62ms', '1.5s', '200us'"
SIZE_FORMS = (
    "a number with a size unit: B, kB/KB, MB, GB (powers of 10), KiB, MiB, GiB (powers of 2), "
    "pkt (packets) or BDP (multiples of the bandwidth-delay product), e.g. '1500B', '64KiB', '900pkt', '2BDP'"
)

_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": NS_PER_SEC,
    "sec": NS_PER_SEC,
    "min": 60 * NS_PER_SEC,
}

_BYTE_UNITS = {
    "b": 1,  # lower-case 'b' alone is ambiguous (bit?) and is rejected below
    "B": 1,
    "byte": 1,
    "bytes": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}

_PACKET_UNITS = {"pkt", "pkts", "packet", "packets", "p"}
_BDP_UNITS = {"bdp", "xbdp", "×bdp", "*bdp"}

_RATE_UNIT = re.compile(r"^([kKMGT]?)(bit|bits|bps|bit/s|b/s|bits/s)$")
#: tc(8)'s lower-case forms: "10mbit", "1gbit" (tc's "mbps" means megaBYTES per second,
#: so lower-case prefixes are accepted with "bit" only).
_TC_RATE_UNIT = re.compile(r"^([mgt])(bit|bits|bit/s)$")
_TC_BYTE_RATE_UNIT = re.compile(r"^[kmgt]?bps$")
_BYTE_RATE_UNIT = re.compile(r"^[kKMGT]?(B/s|Bps|byte/s|bytes/s)$")


def _split(value: object, kind: str, forms: str) -> tuple[Decimal, str]:
    """Split text into (non-negative decimal number, unit text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{value!r} is not a {kind}; expected {forms}")
    if isinstance(value, (int, float)):
        if value == 0:
            return Decimal(0), ""
        raise ValueError(f"{value!r} is not a {kind}: a unit is required; expected {forms}")
    m = _NUMBER.match(value)
    if not m:
        if value.strip().startswith("-"):
            raise ValueError(f"{value!r} is not a {kind}: it must not be negative; expected {forms}")
        raise ValueError(f"{value!r} is not a {kind}; expected {forms}")
    mantissa, exponent, unit = m.groups()
    if exponent is not None and abs(int(exponent)) > 30:
        raise ValueError(f"{value!r} is out of range; expected {forms}")
    try:
        number = Decimal(mantissa)
        if exponent is not None:
            number = number.scaleb(int(exponent))
    except (InvalidOperation, ValueError, OverflowError):
        raise ValueError(f"{value!r} is not a {kind}; expected {forms}") from None
    return number, unit


def _whole(number: Decimal | Fraction, value: object, kind: str, base: str) -> int:
    as_fraction = Fraction(number)
    if as_fraction.denominator != 1:
        raise ValueError(f"{value!r} is not a whole number of {base} (the {kind} base unit)")
    return int(as_fraction)


def parse_rate(value: object) -> int:
    """Parse a bit rate (``"100Mbit"``, ``"10Gbps"``, ``"1Gbit/s"``) into bit/s."""
    number, unit = _split(value, "rate", RATE_FORMS)
    if unit == "" and number == 0:
        return 0
    m = _RATE_UNIT.match(unit)
    tc = _TC_RATE_UNIT.match(unit)
    if tc:
        return _whole(number * _DECIMAL_PREFIX[tc.group(1).upper()], value, "rate", "bit/s")
    if not m:
        if _TC_BYTE_RATE_UNIT.match(unit) and unit != "bps":
            raise ValueError(
                f"{value!r} is ambiguous: in tc {unit!r} means bytes per second, elsewhere bits; write the rate "
                f"in bits with 'bit' ('{number}{unit[0]}bit') or an upper-case prefix ('{number}{unit[0].upper()}bps' = bits)"
            )
        if _BYTE_RATE_UNIT.match(unit):
            raise ValueError(f"{value!r}: byte rates are not accepted, write the rate in bits; expected {RATE_FORMS}")
        if unit == "":
            raise ValueError(f"{value!r} is not a rate: a unit is required; expected {RATE_FORMS}")
        raise ValueError(f"{value!r} is not a rate: unknown unit {unit!r}; expected {RATE_FORMS}")
    return _whole(number * _DECIMAL_PREFIX[m.group(1)], value, "rate", "bit/s")


def parse_duration(value: object) -> int:
    """Parse a duration (``"62ms"``, ``"1.5s"``, ``"200us"``) into nanoseconds."""
    number, unit = _split(value, "duration", DURATION_FORMS)
    if unit == "" and number == 0:
        return 0
    scale = _DURATION_UNITS.get(unit)
    if scale is None:
        if unit == "":
            raise ValueError(f"{value!r} is not a duration: a unit is required; expected {DURATION_FORMS}")
        raise ValueError(f"{value!r} is not a duration: unknown unit {unit!r}; expected {DURATION_FORMS}")
    return _whole(number * scale, value, "duration", "ns")


SizeKind = Literal["bytes", "packets", "bdp"]


@dataclass(frozen=True)
class Size:
    """A buffer or transfer size: bytes, whole packets, or a multiple of the BDP.

    ``value`` is an ``int`` for bytes and packets and an exact ``Fraction`` for BDP
    multiples (so ``"0.1BDP"`` × BDP has no binary rounding).
    """

    kind: SizeKind
    value: int | Fraction

    def __str__(self) -> str:
        if self.kind == "bytes":
            return f"{self.value}B"
        if self.kind == "packets":
            return f"{self.value}pkt"
        return f"{_fraction_text(Fraction(self.value))}BDP"

    @classmethod
    def bytes(cls, n: int) -> Size:
        return cls("bytes", n)

    @classmethod
    def packets(cls, n: int) -> Size:
        return cls("packets", n)

    @classmethod
    def bdp(cls, k: int | float | str | Fraction) -> Size:
        return cls("bdp", Fraction(Decimal(k) if isinstance(k, str) else k))


def parse_size(value: object) -> Size:
    """Parse a size: ``"1500B"``, ``"3MB"``, ``"64KiB"``, ``"900pkt"``, ``"2BDP"``."""
    if isinstance(value, Size):
        return value
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError(f"{value!r} is not a size: write it as text with a unit; expected {SIZE_FORMS}")
    number, unit = _split(value, "size", SIZE_FORMS)
    if unit == "":
        raise ValueError(f"{value!r} is not a size: a unit is required; expected {SIZE_FORMS}")
    if unit.lower() in _BDP_UNITS:
        return Size("bdp", Fraction(number))
    if unit.lower() in _PACKET_UNITS:
        return Size("packets", _whole(number, value, "size", "packets"))
    if unit == "b":
        raise ValueError(f"{value!r}: 'b' is ambiguous (bit or byte?); write 'B' for bytes; expected {SIZE_FORMS}")
    scale = _BYTE_UNITS.get(unit)
    if scale is None:
        raise ValueError(f"{value!r} is not a size: unknown unit {unit!r}; expected {SIZE_FORMS}")
    return Size("bytes", _whole(number * scale, value, "size", "bytes"))


def _fraction_text(f: Fraction) -> str:
    """Shortest exact decimal text of ``f`` if it has one, else a float approximation."""
    if f.denominator == 1:
        return str(f.numerator)
    d = f.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:
        text = f"{Decimal(f.numerator) / Decimal(f.denominator):f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return repr(float(f))


def format_rate(bps: int) -> str:
    """Shortest exact text for a rate: 100_000_000 -> ``"100Mbit"``."""
    for prefix, scale, step in (("T", 10**12, 10**9), ("G", 10**9, 10**6), ("M", 10**6, 10**3), ("k", 10**3, 10**3)):
        if bps >= scale and bps % step == 0:
            return f"{_fraction_text(Fraction(bps, scale))}{prefix}bit"
    return f"{bps}bit"


def format_duration(ns: int) -> str:
    """Shortest exact text for a duration: 62_000_000 -> ``"62ms"``."""
    if ns == 0:
        return "0s"
    for unit, scale, step in (("s", NS_PER_SEC, 10**6), ("ms", 10**6, 10**3), ("us", 10**3, 10**3)):
        if ns >= scale and ns % step == 0:
            return f"{_fraction_text(Fraction(ns, scale))}{unit}"
    return f"{ns}ns"
