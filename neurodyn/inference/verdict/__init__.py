"""The attractor verdict: each test's evidence and the rule that combines them.

- :mod:`.rule` -- :class:`Evidence`, :class:`Verdict` and :func:`combine`;
- :mod:`.topology` -- the activity's Betti numbers from a gain-free cloud, against time-shifted
  nulls;
- :mod:`.fluctuations` -- coherent bump-frame fluctuations beyond a shared gain;
- :mod:`.sleep` -- the ring's persistence in sleep: co-firing, the manifold and continuity.

The names below are resolved on first use: importing one module imports no other.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "rule": ("Evidence", "Verdict", "combine"),
    "topology": ("activity_topology", "activity_cloud", "read_betti", "coverage_gap"),
    "fluctuations": ("bump_frame_fluctuations",),
    "sleep": ("check_sleep", "sleep_decoding", "SleepDecoding", "cofiring", "rolled"),
})
