"""What runs a spec: ``experiment.backend`` and the optional ``[linux]`` table of the
``linux`` backend's options (``docs/linux-backend.md``). The simulator ignores them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .fields import _Model

#: The backends a spec may name (``ccbench.backends.BACKENDS`` implements each).
BackendName = Literal["sim", "linux"]


class LinuxOptions(_Model):
    """``[linux]``: how the ``linux`` backend sets up the kernel (ignored by ``sim``)."""

    offloads: Literal["host", "kernel"] = Field(
        "host",
        description="'host': the senders' gso_max_segs/gso_max_size and the receiver's gro_max_size from the "
        "resolved [host] (segmentation in software, so the wire carries single packets as the simulator's); "
        "'kernel': the kernel's defaults",
    )
    delay: Literal["auto", "netem", "delayline"] = Field(
        "auto",
        description="how RTT above the veth path's own is added: 'auto' (netem if the kernel has it, else the "
        "userspace delay line), 'netem', 'delayline'",
    )
