"""The diffusion tensor of a bump computed independently of :mod:`neurodyn.analysis.drift` (imported
by the drift tests)."""

import numpy as np
import torch


def null_vector_theory(net, noise):
    """D from the numerically built Jacobian at ``u*(0)``: its left and right null vectors, the
    right ones scaled so that the decoded phase moves at unit rate along them (the decoder's
    gradient by autograd), independent of the manifold's tangent formula.

    Returns the tensor, the left null vectors ``(dim, N)``, the decoder's gradient ``(dim, N)``
    and the scaled right null vectors ``(dim, N)``.
    """
    g = net.geometry
    u = net.manifold.u_star(torch.zeros(g.dim, dtype=torch.float64)).detach()
    jac = net.jacobian(u).detach().numpy()
    _, s, vh = np.linalg.svd(jac)
    right = vh[-g.dim:]  # (dim, N): the right null space
    _, s_left, vh_left = np.linalg.svd(jac.T)
    left = vh_left[-g.dim:]
    assert s[-g.dim - 1] > 1e3 * s[-g.dim] and s_left[-g.dim - 1] > 1e3 * s_left[-g.dim]
    uu = u.clone().requires_grad_(True)
    psi = g.decode(net.rates(uu)).reshape(-1)
    grad = np.stack([torch.autograd.grad(psi[a], uu, retain_graph=True)[0].reshape(-1).numpy()
                     for a in range(g.dim)])  # (dim, N)
    tang = np.linalg.solve((grad @ right.T).T, right)  # grad @ tang.T = identity
    m = np.linalg.inv(left @ tang.T)
    return 0.5 * noise**2 * m @ (left @ left.T) @ m.T, left, grad, tang
