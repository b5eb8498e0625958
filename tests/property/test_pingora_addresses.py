"""Pingora's servers are socket addresses as Rust's `SocketAddr::from_str` reads them: any
IPv4 or IPv6 address with a port of any number of ASCII digits (leading zeros allowed,
below 2**16), and nothing around it. A trailing newline passed a `$`-anchored pattern, and
a zero-padded port was refused although Rust takes it."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.recipes.constructions.pingora import parse_socket_address

V4 = st.builds(ipaddress.IPv4Address, st.integers(0, 2**32 - 1))
V6 = st.builds(ipaddress.IPv6Address, st.integers(0, 2**128 - 1))
#: what may surround a valid address: whitespace, controls, other digits, signs
AROUND = st.sampled_from(["\n", "\r\n", " ", "\t", "\x00", "\u0660", "+", "-", "x", "]"])


def socket_text(address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: str) -> str:
    shown = str(address) if address.version == 4 else f"[{address}]"
    return f"{shown}:{port}"


@settings(max_examples=300, deadline=None)
@given(st.one_of(V4, V6), st.integers(0, 2**16 - 1), st.integers(0, 12))
def test_every_address_and_zero_padded_port_parses(
        address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int, zeros: int) -> None:
    assert parse_socket_address(socket_text(address, "0" * zeros + str(port))) == \
        (address, port)


@settings(max_examples=300, deadline=None)
@given(st.one_of(V4, V6), st.integers(0, 2**16 - 1), AROUND, st.booleans())
def test_anything_around_the_address_is_refused(
        address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int, extra: str,
        after: bool) -> None:
    text = socket_text(address, str(port))
    assert parse_socket_address(text + extra if after else extra + text) is None


@settings(max_examples=100, deadline=None)
@given(st.one_of(V4, V6), st.integers(2**16, 10**5000))
def test_a_port_past_16_bits_is_refused_whatever_its_length(
        address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> None:
    digits = str(port) if port < 10**4000 else "9" * 5000  # str() itself stops at 4,300
    assert parse_socket_address(socket_text(address, digits)) is None
