"""SEAL: learned Hopfield-compatible attractor energies on ring and torus populations."""

__version__ = "0.1.0"
