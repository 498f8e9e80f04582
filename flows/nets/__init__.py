"""Velocity networks beyond the built-in two-layer ReLU field, for the practice regime.

:mod:`.conv` holds :class:`~flows.nets.conv.ConvField`, a small convolutional field (a
two-level UNet with a time and label embedding) for square grey-scale images such as digits
(8 x 8), mnist14 (14 x 14) and mnist (28 x 28). It is trained through the user-model mechanism:
``flows train --model-class flows.nets.conv:ConvField --model-args '{"classes": 10}'``.
:mod:`.mlp` holds examples of networks written as a user writes one (``SeluMLP``,
``ConditionalMLP``), named by their import path: ``TrainConfig(model="flows.nets.mlp:SeluMLP")``.
"""

from __future__ import annotations

from _runkit.lazy import lazy_names

__getattr__, __dir__, __all__ = lazy_names(__name__, {
    "conv": ("ConvField",),
    "mlp": ("SeluMLP", "ConditionalMLP"),
})
