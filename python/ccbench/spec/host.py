"""The ``[host]`` table: how the end hosts behave (the engine's host layer,
``crates/ccsim/src/host/``), with per-sender overrides ``[[senders]] host = {...}``.

Defaults are Linux's (6.18, this project's reference machine); ``model = "ideal"``
gives the exact-timing, one-packet-per-send host of the engine before the host layer,
and any field set next to ``model`` overrides that preset. The resolved host of each
sender is in the engine configuration the manifest records.

==================  ==========  ==========  ===============================================
field               linux       ideal       Linux reference
==================  ==========  ==========  ===============================================
``timing_noise``    1.0         0           processing delays measured on this machine
                                            (``validation/host_noise_calibration.py``);
                                            a multiplier, 0 = exact timing
``gso_max_segs``    65535       1           device ``gso_max_segs`` (``GSO_MAX_SEGS``);
                                            skbs sized by ``tcp_tso_autosize``
``gso_max_size``    65536       65536       device ``gso_max_size`` (``GSO_LEGACY_MAX_SIZE``)
``gro_max_size``    65536       0           device ``gro_max_size``; below two packets
                                            (e.g. 1500) nothing merges
``hz``              250         1000        ``CONFIG_HZ`` (jiffies: delayed-ACK timer)
==================  ==========  ==========  ===============================================
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .fields import _Model

LINUX_HOST: dict[str, Any] = {
    "timing_noise": 1.0,
    "gso_max_segs": 65535,
    "gso_max_size": 65536,
    "gro_max_size": 65536,
    "hz": 250,
}
IDEAL_HOST: dict[str, Any] = {
    "timing_noise": 0.0,
    "gso_max_segs": 1,
    "gso_max_size": 65536,
    "gro_max_size": 0,
    "hz": 1000,
}
PRESETS = {"linux": LINUX_HOST, "ideal": IDEAL_HOST}


class HostSpec(_Model):
    """``[host]`` / ``[[senders]] host``: a preset (``model``) and overrides."""

    model: Literal["linux", "ideal"] | None = Field(
        None, description="'linux' (default: Linux 6.18 behaviour) or 'ideal' (exact timing, single packets)"
    )
    timing_noise: float | None = Field(
        None, ge=0, le=100, description="multiplier of the measured host processing delays; 0 = exact timing"
    )
    gso_max_segs: int | None = Field(
        None, ge=1, le=65535, description="segments per GSO skb at most (Linux 65535; 1 = one packet per send)"
    )
    gso_max_size: int | None = Field(None, ge=2048, le=524288, description="bytes per GSO skb at most (Linux 65536)")
    gro_max_size: int | None = Field(
        None, ge=0, le=524288, description="GRO frame limit in bytes (Linux 65536; 0 or 1500 = no merging)"
    )
    hz: int | None = Field(None, ge=100, le=10000, description="kernel clock CONFIG_HZ (Linux default 250)")


def resolve_host(base: HostSpec | None, override: HostSpec | None) -> dict[str, Any]:
    """The engine's host config of one sender: the ``[host]`` table (``base``) with the
    sender's ``host`` (``override``) on top. A sender that names its own ``model``
    starts from that preset and ignores ``[host]``; otherwise the preset of ``[host]``
    (default linux), then ``[host]``'s fields, then the sender's fields."""
    layers = [override] if override is not None and override.model is not None else [base, override]
    model = next((x.model for x in layers if x is not None and x.model is not None), "linux")
    out = dict(PRESETS[model])
    for layer in layers:
        if layer is not None:
            for k, v in layer.model_dump(exclude_none=True, exclude={"model"}).items():
                out[k] = float(v) if k == "timing_noise" else v
    return out
