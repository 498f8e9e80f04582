"""The velocity field v(x, t[, c]) of flow matching, in one home.

- :mod:`~flows.field.relu`: the built-in two-layer ReLU field (:class:`FieldSpec`,
  :class:`TwoLayerReLUField`, its input :func:`features`).
- :mod:`~flows.field.module`: any ``torch.nn.Module`` ``v(x, t[, c])`` as a field
  (:class:`ModuleField`, built from an import path by :func:`build_module`), and the model file
  format every field is saved in.
- :mod:`~flows.field.conv`: :class:`ConvField`, a small convolutional field (a two-level UNet
  with a time and label embedding) for square grey-scale images (digits, mnist14, mnist), trained
  through the user-model mechanism:
  ``flows train --model-class flows.field.conv:ConvField --model-args '{"classes": 10}'``.
- :mod:`~flows.field.mlp`: networks written as a user writes one (``SeluMLP``,
  ``ConditionalMLP``), named by their import path:
  ``TrainConfig(model="flows.field.mlp:SeluMLP")``.

Names are imported on first use.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "relu": ("FieldSpec", "TwoLayerReLUField", "features", "REGIMES"),
    "module": ("ModuleField", "build_module", "import_class", "resolve_device"),
    "conv": ("ConvField",),
    "mlp": ("SeluMLP", "ConditionalMLP"),
})
