"""Figures and progress bars in a Jupyter notebook: the display side of both packages'
plotting (``neurodyn.plotting`` and ``flows.plotting`` return every figure through
:func:`notebook_figure`).

Examples
--------
>>> in_notebook()  # a doctest is no kernel
False
"""

from __future__ import annotations

import functools
import sys

__all__ = ["in_notebook", "notebook_figure"]


def in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (an IPython ``ZMQInteractiveShell``).

    Returns
    -------
    bool
    """
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    try:
        name = type(get()).__name__ if get is not None else ""
    except Exception:  # noqa: BLE001 - IPython half imported: not a kernel
        return False
    return name == "ZMQInteractiveShell"


def notebook_figure(fig, created: bool = True):
    """``fig``, made to display exactly once in a Jupyter notebook; returns it.

    A figure the library created (stand-alone, unknown to pyplot, so no backend shows it) gets
    a ``_repr_png_``: returned as a cell's value it shows as a PNG, with or without ``%matplotlib
    inline``. A figure of axes the caller passed (``created=False``) is the caller's: where it
    is pyplot's (``plt.subplots``), pyplot shows it when the cell ends, and returned as the
    cell's value it would show a second time; in a Jupyter kernel the PNG display of figures
    then closes a pyplot figure once it has shown it, so it shows once either way.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure a plotting function returns.
    created : bool
        Whether the plotting function created it (``ax=None``).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig`` itself.
    """
    if created:
        fig._repr_png_ = functools.partial(_figure_png, fig)
    elif getattr(fig.canvas, "manager", None) is not None and in_notebook():
        _show_pyplot_figures_once()
    return fig


def _figure_png(fig) -> bytes:
    """The figure as PNG bytes (tight bounding box, as notebooks show figures)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _show_pyplot_figures_once() -> None:
    """Make the kernel's PNG display of figures close a pyplot figure it has shown, so the
    inline backend does not show it again when the cell ends."""
    from IPython import get_ipython
    from matplotlib.figure import Figure

    def show(fig):
        data = _figure_png(fig)
        if getattr(fig.canvas, "manager", None) is not None:
            import matplotlib.pyplot as plt

            plt.close(fig)
        return data

    get_ipython().display_formatter.formatters["image/png"].for_type(Figure, show)

