"""Congestion control algorithms written in Python, run by the engine without a rebuild.

Subclass :class:`Cca`, override the hooks you need (the same hooks as the engine's Rust
``CongestionControl`` trait, named after Linux's ``tcp_congestion_ops``), and name the
class in a spec::

    [[flows]]
    cca = "python:mypkg.mymod:MyCca"      # an importable module
    # or  "python:path/to/my_cca.py:MyCca"  (a file; relative to the working directory)
    params = { beta = 0.7 }               # keyword arguments of MyCca(...)

or pass the class itself where a spec dict names the CCA (``{"cca": MyCca}``) for
:func:`ccbench.run`. The engine calls the hooks of one instance per flow:

- ``ssthresh(tp) -> int``: the slow-start threshold on a congestion event (required
  unless the class defines ``cong_control``);
- ``cong_avoid(tp, sample)``: window growth, called as Linux does (cwnd-limited, not
  in a reduction); ``pkts_acked(tp, sample)`` on every ACK before it;
- ``cong_control(tp, sample)``: a model-based CCA's per-ACK control (then the CCA
  sets ``tp.cwnd`` and ``tp.pacing_rate`` itself, as BBR does);
- ``set_state(tp, new_state)``, ``cwnd_event(tp, event)``, ``undo_cwnd(tp) -> int``,
  ``init(tp)``, and ``state(tp) -> str`` (the ``state`` column of the time series).

``tp`` (:class:`ccbench._core.TcpState`) holds the connection: ``cwnd``, ``ssthresh``,
``cwnd_cnt`` and ``pacing_rate`` (bytes/s) are writable, the rest read-only; windows
are in packets and times in integer nanoseconds. ``tp.random()`` draws from the flow's
seeded stream, the only randomness that keeps runs reproducible. See docs/python-cca.md.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .errors import CcbenchError

if TYPE_CHECKING:
    from ._core import AckSample, TcpState

__all__ = [
    "PREFIX",
    "Cca",
    "PythonCcaError",
    "cong_avoid_ai",
    "describe",
    "factories",
    "is_python_cca",
    "name_of",
    "reno_cong_avoid",
    "reno_ssthresh",
    "resolve",
    "slow_start",
]

#: Spec names of Python CCAs start with this.
PREFIX = "python:"

#: Hooks the engine calls only when a subclass overrides them.
HOOKS = (
    "init",
    "ssthresh",
    "cong_avoid",
    "pkts_acked",
    "cong_control",
    "set_state",
    "cwnd_event",
    "undo_cwnd",
    "state",
)


class PythonCcaError(CcbenchError, RuntimeError):
    """A Python CCA raised, or returned or set a bad value, during a run. The message
    names the CCA, the flow, the hook and the simulated time and carries the user's
    traceback; ``__cause__`` is the user's exception."""


class Cca:
    """Base class of a CCA written in Python. Override the hooks you need; those you do
    not override are not called (the engine's defaults apply).

    The constructor's keyword arguments are the CCA's parameters (a spec's
    ``params``). Set ``needs_ecn = True`` for a CCA that reacts to CE marks (DCTCP):
    its flows then send ECT and receivers echo CE per segment.
    """

    needs_ecn: ClassVar[bool] = False

    def init(self, tp: TcpState) -> None:
        """The connection starts; ``tp.cwnd`` is the initial window."""

    def ssthresh(self, tp: TcpState) -> int:
        """New slow-start threshold (packets) on entering recovery, CWR or loss."""
        raise NotImplementedError

    def cong_avoid(self, tp: TcpState, sample: AckSample) -> None:
        """Grow ``tp.cwnd`` on an ACK (``sample.acked_sacked`` packets newly delivered)."""

    def pkts_acked(self, tp: TcpState, sample: AckSample) -> None:
        """Every ACK, before ``cong_avoid``/``cong_control``: RTT and delivery samples."""

    def cong_control(self, tp: TcpState, sample: AckSample) -> None:
        """Model-based control on every ACK: set ``tp.cwnd`` and ``tp.pacing_rate``."""

    def set_state(self, tp: TcpState, new_state: str) -> None:
        """The congestion state is about to become ``new_state`` ("open", "disorder",
        "cwr", "recovery" or "loss")."""

    def cwnd_event(self, tp: TcpState, event: str) -> None:
        """A connection event: "tx_start", "cwnd_restart", "complete_cwr", "loss",
        "ecn_is_ce" or "ecn_no_ce"."""

    def undo_cwnd(self, tp: TcpState) -> int:
        """The window to restore when a reduction proves spurious."""
        return max(tp.cwnd, tp.prior_cwnd)

    def state(self, tp: TcpState) -> str:
        """The phase shown in the time series' ``state`` column."""
        return "slow_start" if tp.cwnd < tp.ssthresh else "cong_avoid"

    def _ccbench_hooks(self) -> list[str]:
        """The hooks this class overrides (the engine calls only these)."""
        return [h for h in HOOKS if getattr(type(self), h) is not getattr(Cca, h)]


# ---- Linux tcp_cong.c helpers, for classic CCAs (same arithmetic as the engine's) ----


def slow_start(tp: TcpState, acked: int) -> int:
    """``tcp_slow_start``: grow cwnd by ``acked`` up to ssthresh; return the acked
    packets left over for congestion avoidance."""
    cwnd = min(tp.cwnd + acked, tp.ssthresh)
    leftover = acked - min(cwnd - tp.cwnd, acked)
    tp.cwnd = min(cwnd, tp.cwnd_clamp)
    return leftover


def cong_avoid_ai(tp: TcpState, w: int, acked: int) -> None:
    """``tcp_cong_avoid_ai``: add one packet per ``w`` packets acked."""
    w = max(w, 1)
    if tp.cwnd_cnt >= w:
        tp.cwnd_cnt = 0
        tp.cwnd = tp.cwnd + 1
    tp.cwnd_cnt = tp.cwnd_cnt + acked
    if tp.cwnd_cnt >= w:
        delta = tp.cwnd_cnt // w
        tp.cwnd_cnt = tp.cwnd_cnt - delta * w
        tp.cwnd = tp.cwnd + delta
    tp.cwnd = min(tp.cwnd, tp.cwnd_clamp)


def reno_cong_avoid(tp: TcpState, acked: int) -> None:
    """``tcp_reno_cong_avoid``: slow start, then one packet per window of ACKs."""
    if tp.cwnd < tp.ssthresh:
        acked = slow_start(tp, acked)
        if acked == 0:
            return
    cong_avoid_ai(tp, tp.cwnd, acked)


def reno_ssthresh(tp: TcpState) -> int:
    """``tcp_reno_ssthresh``: half the window, at least 2 packets."""
    return max(tp.cwnd >> 1, 2)


# ---- names <-> classes ----

#: Classes passed by object (``{"cca": MyCca}``), by the name they were given.
_REGISTERED: dict[str, type[Cca]] = {}


def is_python_cca(name: object) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


def name_of(cls: type[Cca]) -> str:
    """The spec name of a class passed by object, registered so :func:`resolve` finds
    it in this process even when it is not importable (defined in a function)."""
    if not (isinstance(cls, type) and issubclass(cls, Cca)):
        raise ValueError(f"{cls!r} is not a subclass of ccbench.Cca")
    name = f"{PREFIX}{cls.__module__}:{cls.__qualname__}"
    _REGISTERED[name] = cls
    return name


def resolve(name: str) -> type[Cca]:
    """The class a ``python:`` name means; ``ValueError`` saying why when it cannot be
    found (bad form, module or file not found or failing to import, no such class, not
    a :class:`Cca` subclass)."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    target, sep, attr = name.removeprefix(PREFIX).rpartition(":")
    if not is_python_cca(name) or not sep or not target or not attr:
        raise ValueError(
            f"{name!r} is not a Python CCA name; write 'python:package.module:Class' or 'python:path/to/file.py:Class'"
        )
    if target.endswith(".py") or "/" in target:
        module = _load_file(Path(target))
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            raise ValueError(f"cannot import module {target!r} for {name!r}: {e}") from None
        except Exception as e:
            raise ValueError(f"importing module {target!r} for {name!r} raised {type(e).__name__}: {e}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ValueError(f"{target!r} has no class {attr!r} (for {name!r})")
    if not (isinstance(obj, type) and issubclass(obj, Cca)):
        raise ValueError(f"{name!r} is {obj!r}, not a subclass of ccbench.Cca")
    return obj


def _load_file(path: Path) -> Any:
    """Import a ``.py`` file once per process, under a name derived from its path."""
    resolved = path.expanduser().resolve()
    if not resolved.is_file():
        raise ValueError(f"Python CCA file {str(path)!r} does not exist (relative paths start at {Path.cwd()})")
    mod_name = "ccbench_user_cca_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, resolved)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[mod_name]
        raise ValueError(f"importing {str(path)!r} raised {type(e).__name__}: {e}") from None
    return module


def check_params(name: str, params: Mapping[str, Any]) -> None:
    """``ValueError`` unless ``params`` fit the constructor of the class ``name`` means."""
    cls = resolve(name)
    try:
        inspect.signature(cls).bind(**params)
    except TypeError as e:
        raise ValueError(f"parameters {dict(params)!r} do not fit {cls.__qualname__}{inspect.signature(cls)}: {e}") from None


def describe(name: str) -> dict[str, Any]:
    """``ccbench describe`` of a Python CCA: its docstring and constructor parameters."""
    cls = resolve(name)
    doc = inspect.getdoc(cls) or ""
    params = [
        {"name": p.name, "default": None if p.default is inspect.Parameter.empty else p.default, "doc": ""}
        for p in inspect.signature(cls).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    return {
        "name": name,
        "family": "python",
        "family_doc": "a user CCA written in Python (docs/python-cca.md)",
        "summary": doc.split("\n\n")[0].replace("\n", " "),
        "reference": f"{cls.__module__}.{cls.__qualname__}",
        "params": params,
    }


def factories(flows: Iterable[Mapping[str, Any]]) -> dict[str, Callable[[str], Cca]]:
    """For the engine: each ``python:`` CCA name among ``flows`` (engine config flows)
    -> a function building an instance from the flow's parameters as JSON."""
    out: dict[str, Callable[[str], Cca]] = {}
    for f in flows:
        name = f["cca"]
        if is_python_cca(name) and name not in out:
            out[name] = _factory(resolve(name))
    return out


def _factory(cls: type[Cca]) -> Callable[[str], Cca]:
    def build(params_json: str) -> Cca:
        params = json.loads(params_json) or {}
        return cls(**params)

    return build
