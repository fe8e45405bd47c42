"""ccbench: reproducible benchmarking of TCP congestion control.

>>> import ccbench
>>> result = ccbench.run("specs/quickstart.toml", out_dir="runs/quickstart")  # doctest: +SKIP
>>> result.summary()  # doctest: +SKIP

The compiled engine (``ccbench._core``) is loaded only when a simulation is run or the
CCA list is asked for, so specs, stored results and metrics work without it.
"""

from .api import list_ccas, load, load_spec, run
from .results import RunResult
from .spec import Experiment, SpecError

__version__ = "0.1.0"

__all__ = ["Experiment", "RunResult", "SpecError", "__version__", "list_ccas", "load", "load_spec", "run"]
