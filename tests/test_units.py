from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccbench.units import Size, format_duration, format_rate, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100Mbit", 100_000_000),
        ("10Gbps", 10_000_000_000),
        ("1Gbit/s", 1_000_000_000),
        ("2.5Gb/s", 2_500_000_000),
        ("500kbit", 500_000),
        ("500Kbit", 500_000),
        ("64000bps", 64_000),
        ("25Gbit", 25_000_000_000),
        ("1e2Mbit", 100_000_000),
        (" 100 Mbit ", 100_000_000),
        (0, 0),
    ],
)
def test_parse_rate_accepts(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("62ms", 62_000_000),
        ("1.5s", 1_500_000_000),
        ("200us", 200_000),
        ("200µs", 200_000),
        ("10ns", 10),
        ("0.1s", 100_000_000),
        ("2min", 120_000_000_000),
        ("0", 0),
        (0, 0),
    ],
)
def test_parse_duration_accepts(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("2BDP", Size("bdp", Fraction(2))),
        ("0.5bdp", Size("bdp", Fraction(1, 2))),
        ("0.25BDP", Size("bdp", Fraction(1, 4))),
        ("900pkt", Size("packets", 900)),
        ("900packets", Size("packets", 900)),
        ("3MB", Size("bytes", 3_000_000)),
        ("1250KB", Size("bytes", 1_250_000)),
        ("1250kB", Size("bytes", 1_250_000)),
        ("1500B", Size("bytes", 1500)),
        ("64KiB", Size("bytes", 65536)),
        ("1MiB", Size("bytes", 2**20)),
        ("1.5KiB", Size("bytes", 1536)),
    ],
)
def test_parse_size_accepts(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("fn", "bad", "fragment"),
    [
        (parse_rate, "10MB/s", "byte rates are not accepted"),
        (parse_rate, "100", "a unit is required"),
        (parse_rate, 100, "a unit is required"),
        (parse_rate, "100Mhz", "unknown unit 'Mhz'"),
        (parse_rate, "-1Mbit", "must not be negative"),
        (parse_rate, "0.5bit", "whole number of bit/s"),
        (parse_rate, True, "not a rate"),
        (parse_duration, "62", "a unit is required"),
        (parse_duration, "1.5ns", "whole number of ns"),
        (parse_duration, "5 parsecs", "unknown unit"),
        (parse_duration, None, "not a duration"),
        (parse_duration, "1e99s", "out of range"),
        (parse_size, "3b", "ambiguous"),
        (parse_size, 1500, "write it as text with a unit"),
        (parse_size, "1.5pkt", "whole number of packets"),
        (parse_size, "two BDP", "not a size"),
    ],
)
def test_parse_rejects_with_clear_message(fn, bad, fragment):
    with pytest.raises(ValueError, match=fragment) as e:
        fn(bad)
    assert "expected" in str(e.value) or "whole number" in str(e.value) or "range" in str(e.value)


def test_error_lists_accepted_forms():
    with pytest.raises(ValueError) as e:
        parse_size("lots")
    for form in ("B", "KiB", "pkt", "BDP", "powers of 10", "powers of 2"):
        assert form in str(e.value)


@given(st.integers(min_value=0, max_value=10**15))
def test_rate_format_round_trips(bps):
    assert parse_rate(format_rate(bps)) == bps


@given(st.integers(min_value=0, max_value=10**15))
def test_duration_format_round_trips(ns):
    assert parse_duration(format_duration(ns)) == ns


@given(st.sampled_from(["B", "pkt"]), st.integers(min_value=0, max_value=10**12))
def test_size_format_round_trips(unit, n):
    s = parse_size(f"{n}{unit}")
    assert parse_size(str(s)) == s


def test_format_is_readable():
    assert format_rate(100_000_000) == "100Mbit"
    assert format_rate(2_500_000_000) == "2.5Gbit"
    assert format_duration(62_000_000) == "62ms"
    assert format_duration(1_500_000_000) == "1.5s"
    assert str(Size.bdp("0.5")) == "0.5BDP"
