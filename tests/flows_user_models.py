"""Velocity modules from outside the library, as a user's own package holds them (imported by
path in the tests: 'flows_user_models:...', which a model file may name only when trusted).
The networks are the library's examples (:mod:`flows.field.mlp`) under this module's name."""

from flows.field import mlp


class SeluMLP(mlp.SeluMLP):
    """:class:`flows.field.mlp.SeluMLP` in a user's module."""


class ConditionalMLP(mlp.ConditionalMLP):
    """:class:`flows.field.mlp.ConditionalMLP` in a user's module."""


class NotAModule:
    """Refused by the model loader."""
