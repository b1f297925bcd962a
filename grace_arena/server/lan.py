"""The address that players' phones reach this machine at, for the join URL and QR code.

Not from the host name: on Debian and Ubuntu the host name maps to a loopback address
(``127.0.1.1`` in ``/etc/hosts``), which no phone can reach. The address comes from the
machine's network interfaces (``ifaddr``): loopback and link-local addresses are skipped, an
interface that is not virtual (docker, bridges, VPN tunnels) comes first, and a private
address (10/8, 172.16/12, 192.168/16) before another. ``--public-url`` overrides all of this
(a reverse proxy, a tunnel, a name on the local DNS).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AddressChoice",
    "choose_lan_address",
    "lan_address",
    "lan_address_choice",
    "public_base",
]

#: Interface name prefixes of virtual networks that phones on the LAN do not share.
VIRTUAL_PREFIXES = (
    "docker", "br-", "veth", "virbr", "vmnet", "vboxnet", "tun", "tap", "wg", "zt",
    "tailscale", "utun", "cni", "flannel", "cali", "lxc", "lxd", "podman",
)  # fmt: skip


#: The ranges local networks use (RFC 1918); ``ipaddress``'s ``is_private`` also counts
#: documentation and other reserved ranges.
PRIVATE_NETWORKS = tuple(
    ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)


@dataclass(frozen=True)
class AddressChoice:
    """The address chosen, the interface it belongs to and why, in words for the operator."""

    address: str
    interface: str | None
    reason: str

    @property
    def loopback_only(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback


def choose_lan_address(adapters: Iterable[tuple[str, str]]) -> AddressChoice:
    """Pick the join address among ``(interface name, IPv4 address)`` pairs.

    >>> choose_lan_address([("lo", "127.0.0.1"), ("docker0", "172.17.0.1"), ("eth0", "10.0.0.5")])
    ... # doctest: +NORMALIZE_WHITESPACE
    AddressChoice(address='10.0.0.5', interface='eth0',
                  reason="eth0's address on the local network")
    >>> choose_lan_address([("lo", "127.0.0.1")]).loopback_only
    True
    """
    candidates = []
    for order, (name, text) in enumerate(adapters):
        try:
            address = ipaddress.IPv4Address(text)
        except ValueError:
            continue
        if address.is_loopback or address.is_link_local or address.is_unspecified:
            continue
        virtual = name.lower().startswith(VIRTUAL_PREFIXES)
        lan = any(address in net for net in PRIVATE_NETWORKS)
        candidates.append(((virtual, not lan, order), name, str(address)))
    if not candidates:
        return AddressChoice(
            "127.0.0.1",
            None,
            "no network interface but loopback: phones cannot reach 127.0.0.1; connect to "
            "a network or pass --public-url",
        )
    (virtual, _, _), name, address = min(candidates)
    what = (
        "a virtual interface's address (no other found)"
        if virtual
        else "address on the local network"
    )
    return AddressChoice(address, name, f"{name}'s {what}")


def lan_address_choice() -> AddressChoice:
    """:func:`choose_lan_address` over this machine's interfaces."""
    import ifaddr

    pairs = []
    try:
        for adapter in ifaddr.get_adapters():
            for ip in adapter.ips:
                if ip.is_IPv4:
                    pairs.append((adapter.nice_name, str(ip.ip)))
    except OSError:
        pass
    return choose_lan_address(pairs)


def lan_address() -> str:
    """This machine's address on the local network, as players' phones will reach it."""
    return lan_address_choice().address


def public_base(console, host: str, port: int, public_url: str | None) -> str:
    """The base of the join URL, and a line on ``console`` (a rich console) saying which
    address was chosen and why."""
    if public_url:
        console.print(f"join URL from --public-url: {public_url}", soft_wrap=True, highlight=False)
        return public_url
    if host not in ("0.0.0.0", "::"):
        return f"http://{host}:{port}"
    choice = lan_address_choice()
    if choice.loopback_only:
        console.print(f"[bold yellow]warning:[/] {choice.reason}", soft_wrap=True, highlight=False)
    else:
        console.print(
            f"join address {choice.address}: {choice.reason} (--public-url to choose another)",
            soft_wrap=True,
            highlight=False,
        )
    return f"http://{choice.address}:{port}"
