"""A small convolutional velocity field v(x, t[, c]) for square grey-scale images.

The flattened state x (B, d), d = s^2, is read as an s x s image. One 3 x 3 convolution lifts
it to C channels; a residual block works at full resolution, a stride-2 convolution halves it
to 2C channels for a second block, and nearest upsampling with the full-resolution features
concatenated (a skip connection) feeds a third block and a 3 x 3 output convolution,
initialised to zero (the field starts at v = 0). Each block is GroupNorm, SiLU, conv, a
feature-wise scale and shift from the embedding (FiLM), GroupNorm, SiLU, conv, plus its input.
The embedding is an MLP of Fourier features of t, plus a learned embedding of the label c
(classes K > 0; label K, the null label of classifier-free guidance, is also what an unlabelled
call uses). The convolutions do not depend on s, so one network serves 8 x 8, 14 x 14 and
28 x 28 images; s is read from d at each call.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import FlowsError, check_int

__all__ = ["ConvField"]


def _groups(channels: int) -> int:
    return math.gcd(channels, 8)


class _Block(nn.Module):
    """Residual block with a FiLM of the embedding (see the module)."""

    def __init__(self, cin: int, cout: int, emb: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(_groups(cin), cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.film = nn.Linear(emb, 2 * cout)
        self.norm2 = nn.GroupNorm(_groups(cout), cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Identity() if cin == cout else nn.Conv2d(cin, cout, 1)

    def forward(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        """h (B, cin, s, s), e (B, emb) -> (B, cout, s, s)."""
        y = self.conv1(F.silu(self.norm1(h)))
        scale, shift = self.film(e)[:, :, None, None].chunk(2, dim=1)
        y = self.conv2(F.silu(self.norm2(y) * (1 + scale) + shift))
        return self.skip(h) + y


class ConvField(nn.Module):
    """A two-level convolutional UNet velocity field on flattened square images.

    Parameters
    ----------
    classes : int
        Number K of classes (0: unconditional); labels 0..K, K the null label.
    channels : int
        Channels C at full resolution (2C at half resolution).
    emb : int
        Width of the time (and label) embedding.
    frequencies : int
        Fourier frequencies of t (sin and cos of 2 pi k t, k = 1..frequencies, and t itself).

    Examples
    --------
    >>> net = ConvField(classes=10, channels=8)
    >>> v = net(torch.randn(3, 64), torch.rand(3, 1), torch.tensor([0, 5, 10]))
    >>> tuple(v.shape), float(v.detach().abs().max())  # an 8 x 8 image each; zero at initialisation
    ((3, 64), 0.0)
    >>> tuple(net(torch.randn(2, 196), torch.rand(2, 1)).shape)  # 14 x 14, null label
    (2, 196)
    """

    def __init__(self, classes: int = 0, channels: int = 32, emb: int = 64,
                 frequencies: int = 8) -> None:
        super().__init__()
        self.classes = check_int("classes", classes, lo=0)
        c = check_int("channels", channels, lo=1)
        emb = check_int("emb", emb, lo=1)
        self.frequencies = check_int("frequencies", frequencies, lo=0)
        self.time = nn.Sequential(nn.Linear(2 * self.frequencies + 1, emb), nn.SiLU(),
                                  nn.Linear(emb, emb))
        self.label = nn.Embedding(self.classes + 1, emb) if self.classes else None
        self.inp = nn.Conv2d(1, c, 3, padding=1)
        self.down = _Block(c, c, emb)
        self.pool = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.mid = _Block(2 * c, 2 * c, emb)
        self.up = _Block(3 * c, c, emb)
        self.out = nn.Conv2d(c, 1, 3, padding=1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def embed(self, t: torch.Tensor, c: torch.Tensor | None) -> torch.Tensor:
        """The embedding (B, emb) of times t (B, 1) and labels c (B,) or None (null label)."""
        k = torch.arange(1, self.frequencies + 1, dtype=t.dtype, device=t.device)
        arg = 2 * math.pi * t * k
        e = self.time(torch.cat([t, torch.sin(arg), torch.cos(arg)], dim=1))
        if self.label is None:
            if c is not None:
                raise FlowsError("ConvField was built with classes=0 but got labels; pass "
                                 "model_args {\"classes\": K} for class-conditional training")
            return e
        if c is None:
            c = torch.full((t.shape[0],), self.classes, dtype=torch.long, device=t.device)
        return e + self.label(c)

    def forward(self, x: torch.Tensor, t: torch.Tensor,
                c: torch.Tensor | None = None) -> torch.Tensor:
        """v(x, t[, c]): x (B, s^2), t (B, 1), c (B,) or None; returns (B, s^2)."""
        b, d = x.shape
        s = math.isqrt(d)
        if s * s != d or s < 2:
            raise FlowsError(f"ConvField reads x as a square image, but its dimension {d} is "
                             "not a square >= 4 (digits 64, mnist14 196, mnist 784)")
        e = self.embed(t.reshape(b, 1).to(x.dtype), c)
        h1 = self.down(self.inp(x.reshape(b, 1, s, s)), e)
        h2 = self.mid(self.pool(h1), e)
        up = F.interpolate(h2, size=(s, s), mode="nearest")
        return self.out(self.up(torch.cat([up, h1], dim=1), e)).reshape(b, d)
