"""The W2-bound figure: its title fits the figure and log ticks read as plain numbers."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg

from flows.plotting.theory import plot_w2_bound


def _title_fits(fig) -> bool:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = fig.axes[0].title.get_window_extent(canvas.get_renderer())
    return fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1


def _figure():
    return plot_w2_bound([64, 256], [1.2, 1.5], [0.35, 0.35], [7.0, 8.0], couplings=[1.4, 1.6],
                         xlabel="width m", trajectory=[3.4, 3.5], source=[1.25, 1.25])


def test_w2_bound_title_fits_and_ticks_are_plain_numbers():
    fig = _figure()
    assert _title_fits(fig)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels(minor=True) + ax.get_yticklabels()]
    assert "2" in labels and not any("10^" in t or "times" in t for t in labels)
    control = _figure()  # the check sees a title that does not fit
    control.axes[0].set_title("W2 " * 60)
    assert not _title_fits(control)
