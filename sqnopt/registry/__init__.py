"""Registry of components by name, filled through pluggy hooks (see :mod:`.hookspecs`)."""

from sqnopt.registry._registry import (
    DEFAULT_PLUGINS,
    ENTRY_POINT_GROUP,
    Entry,
    Registry,
    RegistryError,
    UnknownComponentError,
    get_plugin_manager,
    get_registry,
    hookimpl,
    register_plugin,
    reset_registry,
    unregister_plugin,
)
from sqnopt.registry.hookspecs import RegisterFn

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "Entry",
    "RegisterFn",
    "Registry",
    "RegistryError",
    "UnknownComponentError",
    "get_plugin_manager",
    "get_registry",
    "hookimpl",
    "register_plugin",
    "reset_registry",
    "unregister_plugin",
]
