"""The join URL's address: from the network interfaces, never from the host name."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess

import pytest
from rich.console import Console

from grace_arena.cli.serve import public_base
from grace_arena.server.lan import choose_lan_address, lan_address, lan_address_choice


def test_loopback_link_local_and_virtual_interfaces_come_last() -> None:
    adapters = [
        ("lo", "127.0.0.1"),
        ("docker0", "172.17.0.1"),
        ("wlan0", "169.254.3.4"),  # link-local: no DHCP answer
        ("tailscale0", "100.101.102.103"),
        ("enp3s0", "192.0.2.2"),  # not a private range, but a real interface
        ("wlp2s0", "192.168.1.23"),
    ]
    choice = choose_lan_address(adapters)
    assert (choice.address, choice.interface) == ("192.168.1.23", "wlp2s0")
    assert choose_lan_address(adapters[:5]).address == "192.0.2.2"
    only_virtual = choose_lan_address([("lo", "127.0.0.1"), ("docker0", "172.17.0.1")])
    assert only_virtual.address == "172.17.0.1" and "virtual" in only_virtual.reason
    lonely = choose_lan_address([("lo", "127.0.0.1"), ("eth0", "not an address")])
    assert lonely.loopback_only and "--public-url" in lonely.reason


def _interfaces_by_ip() -> list[str]:
    if not shutil.which("ip"):
        return []
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    addresses = [line.split()[3].split("/")[0] for line in out.splitlines() if " inet " in line]
    return [a for a in addresses if not ipaddress.ip_address(a).is_loopback]


def test_the_host_name_mapped_to_loopback_does_not_decide(monkeypatch) -> None:
    """Debian maps the host name to 127.0.1.1; the join URL must not follow it."""
    real = _interfaces_by_ip()
    if not real:
        pytest.skip("this machine has no network interface but loopback")

    def loopback(*_args, **_kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.1.1", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", loopback)
    monkeypatch.setattr(socket, "gethostbyname", lambda _name: "127.0.1.1")
    assert lan_address() in real
    console = Console(record=True, width=200)
    base = public_base(console, "0.0.0.0", 8000, None)
    assert base == f"http://{lan_address_choice().address}:8000"
    said = console.export_text()
    assert f"join address {lan_address()}" in said and "--public-url" in said


def test_public_url_and_an_explicit_host_win(monkeypatch) -> None:
    console = Console(record=True, width=200)
    assert public_base(console, "0.0.0.0", 8000, "https://quiz.example.org") == (
        "https://quiz.example.org"
    )
    assert "from --public-url" in console.export_text()
    assert public_base(Console(), "127.0.0.1", 9000, None) == "http://127.0.0.1:9000"


def test_only_loopback_warns(monkeypatch) -> None:
    import ifaddr

    class Ip:
        def __init__(self, ip: str) -> None:
            self.ip, self.is_IPv4 = ip, True

    class Adapter:
        nice_name, ips = "lo", [Ip("127.0.0.1")]

    monkeypatch.setattr(ifaddr, "get_adapters", lambda: [Adapter()])
    console = Console(record=True, width=200)
    assert public_base(console, "0.0.0.0", 8000, None) == "http://127.0.0.1:8000"
    said = console.export_text()
    assert "warning" in said and "phones cannot reach" in said
