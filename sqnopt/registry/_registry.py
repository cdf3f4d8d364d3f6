"""The component registry, filled through pluggy hooks."""

from __future__ import annotations

import inspect
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable

import pluggy

from sqnopt.interfaces import KINDS, Component, Kind
import sqnopt.registry.hookspecs as hookspecs

hookimpl = pluggy.HookimplMarker(hookspecs.PROJECT)
ENTRY_POINT_GROUP = "sqnopt"

#: Built-in plugin modules; they register through the same hooks as third-party plugins.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "sqnopt.objectives._plugin",
    "sqnopt.curvature._plugin",
    "sqnopt.schedules._plugin",
    "sqnopt.steps._plugin",
    "sqnopt.projections._plugin",
    "sqnopt.gradients._plugin",
    "sqnopt.penalties._plugin",
    "sqnopt.presets",
)

_HOOK_OF_KIND: dict[Kind, str] = {
    "objective": "sqnopt_register_objectives",
    "curvature": "sqnopt_register_curvature_models",
    "schedule": "sqnopt_register_schedules",
    "step": "sqnopt_register_step_rules",
    "projection": "sqnopt_register_projections",
    "gradient": "sqnopt_register_gradient_estimators",
    "penalty": "sqnopt_register_penalties",
}

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "Entry",
    "PresetEntry",
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


class RegistryError(ValueError):
    """A plugin registered something inconsistent (name clash, wrong kind)."""


class UnknownComponentError(KeyError, ValueError):
    """No component of that kind is registered under that name.

    A ``KeyError`` (a lookup that failed) and a ``ValueError`` (the name is a bad value for a
    parameter), so ``except ValueError`` around a ``Solver(...)`` or ``fit`` catches it too."""

    def __str__(self) -> str:  # KeyError quotes its argument; show the message as written
        return str(self.args[0])


@dataclass(frozen=True)
class Entry:
    kind: Kind
    name: str
    factory: Callable[..., Component]
    aliases: tuple[str, ...]
    source: str  #: the plugin that registered it

    def parameters(self) -> dict[str, Any]:
        """Constructor parameters and their defaults (``inspect.Parameter.empty`` if none)."""
        try:
            sig = inspect.signature(self.factory)
        except (TypeError, ValueError):
            return {}
        return {p.name: p.default for p in sig.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


@dataclass(frozen=True)
class PresetEntry:
    name: str
    factory: Callable[..., Any]     #: ``factory(**kwargs)`` returns a Solver
    aliases: tuple[str, ...]
    source: str


class Registry:
    """Name -> component factory, per kind; and name -> preset (a named composition)."""

    def __init__(self) -> None:
        self._entries: dict[Kind, dict[str, Entry]] = {k: {} for k in KINDS}
        self._aliases: dict[Kind, dict[str, str]] = {k: {} for k in KINDS}
        self._presets: dict[str, PresetEntry] = {}
        self._preset_aliases: dict[str, str] = {}

    def add_preset(self, name: str, factory: Callable[..., Any], *,
                   aliases: tuple[str, ...] = (), source: str = "?") -> None:
        key = name.lower()
        for alias in (key, *(a.lower() for a in aliases)):
            owner = self._preset_aliases.get(alias)
            if owner is not None and self._presets[owner].factory is not factory:
                raise RegistryError(f"{source}: preset name {alias!r} is already registered by "
                                    f"{self._presets[owner].source}; choose another name")
        entry = PresetEntry(key, factory, tuple(a.lower() for a in aliases), source)
        self._presets[key] = entry
        for alias in (key, *entry.aliases):
            self._preset_aliases[alias] = key

    def preset(self, name: str) -> PresetEntry:
        key = self._preset_aliases.get(name.lower())
        if key is None:
            raise UnknownComponentError(
                f"unknown preset {name!r}; presets: {', '.join(self.preset_names())}")
        return self._presets[key]

    def preset_names(self) -> list[str]:
        return sorted(self._presets)

    def add(self, kind: Kind, name: str, factory: Callable[..., Component], *,
            aliases: tuple[str, ...] = (), source: str = "?") -> None:
        if kind not in self._entries:
            raise RegistryError(f"unknown component kind {kind!r}; expected one of {KINDS}")
        if not name or not isinstance(name, str):
            raise RegistryError(f"{source}: component names must be non-empty strings")
        key = name.lower()
        for alias in (key, *(a.lower() for a in aliases)):
            owner = self._aliases[kind].get(alias)
            if owner is not None and self._entries[kind][owner].factory is not factory:
                prev = self._entries[kind][owner]
                raise RegistryError(
                    f"{source}: {kind} name {alias!r} is already registered by {prev.source} "
                    f"({_qualname(prev.factory)}); choose another name")
        entry = Entry(kind, key, factory, tuple(a.lower() for a in aliases), source)
        self._entries[kind][key] = entry
        for alias in (key, *entry.aliases):
            self._aliases[kind][alias] = key

    def get(self, kind: Kind, name: str) -> Entry:
        key = self._aliases[kind].get(name.lower())
        if key is None:
            known = ", ".join(sorted(self._entries[kind])) or "(none)"
            raise UnknownComponentError(
                f"unknown {kind} {name!r}. Registered {kind} names: {known}. "
                "Install the plugin that provides it, or pass a component instance.")
        return self._entries[kind][key]

    def create(self, kind: Kind, name: str, **params: Any) -> Component:
        entry = self.get(kind, name)
        try:
            obj = entry.factory(**params)
        except TypeError as exc:
            raise TypeError(f"{kind} {name!r}: bad parameters {params}: {exc}. "
                            f"Accepted: {list(entry.parameters())}") from exc
        if getattr(obj, "kind", None) != kind:
            raise RegistryError(f"{kind} {name!r} from {entry.source} built a "
                                f"{type(obj).__name__}, which is not a {kind} component")
        return obj

    def names(self, kind: Kind) -> list[str]:
        return sorted(self._entries[kind])

    def entries(self, kind: Kind) -> list[Entry]:
        return [self._entries[kind][n] for n in self.names(kind)]


def _qualname(obj: object) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_registry: Registry | None = None


def get_plugin_manager() -> pluggy.PluginManager:
    """The plugin manager: hook specs, built-ins, and installed plugins (loaded once, lazily).

    ``SQNOPT_LOAD_PLUGINS`` (comma-separated entry-point names) limits which installed plugins
    load; set it to an empty string to load none.
    """
    global _pm
    with _lock:
        if _pm is None:
            import importlib

            pm = pluggy.PluginManager(hookspecs.PROJECT)
            pm.add_hookspecs(hookspecs)
            for modname in DEFAULT_PLUGINS:
                pm.register(importlib.import_module(modname), name=modname)
            allow = os.environ.get("SQNOPT_LOAD_PLUGINS")
            if allow is None:
                pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
            else:
                for ep_name in filter(None, (s.strip() for s in allow.split(","))):
                    pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=ep_name)
            pm.check_pending()
            _pm = pm
        return _pm


def get_registry() -> Registry:
    """The registry built from every registered plugin's hooks."""
    global _registry
    with _lock:
        if _registry is None:
            pm = get_plugin_manager()
            reg = Registry()
            for kind, hook_name in _HOOK_OF_KIND.items():
                hook = getattr(pm.hook, hook_name)
                for impl in hook.get_hookimpls():
                    source = pm.get_name(impl.plugin) or repr(impl.plugin)

                    def register(name: str, factory: Callable[..., Any], *,
                                 aliases: tuple[str, ...] = (), _kind: Kind = kind,
                                 _source: str = source) -> None:
                        reg.add(_kind, name, factory, aliases=tuple(aliases), source=_source)

                    impl.function(**{a: register for a in impl.argnames})
            for impl in pm.hook.sqnopt_register_presets.get_hookimpls():
                source = pm.get_name(impl.plugin) or repr(impl.plugin)

                def register_preset(name: str, factory: Callable[..., Any], *,
                                    aliases: tuple[str, ...] = (), _source: str = source) -> None:
                    reg.add_preset(name, factory, aliases=tuple(aliases), source=_source)

                impl.function(**{a: register_preset for a in impl.argnames})
            _registry = reg
        return _registry


def register_plugin(plugin: object, name: str | None = None) -> str:
    """Register a plugin object (module or class with hookimpls) at run time."""
    with _lock:
        pm = get_plugin_manager()
        plugin_name = pm.register(plugin, name=name)
        if plugin_name is None:
            raise RegistryError(f"plugin {name or plugin!r} is blocked or already registered")
        global _registry
        _registry = None
        try:
            get_registry()
        except Exception:
            pm.unregister(plugin)
            _registry = None
            raise
        return plugin_name


def unregister_plugin(plugin: object) -> None:
    """Remove a plugin registered with :func:`register_plugin`."""
    global _registry
    with _lock:
        get_plugin_manager().unregister(plugin)
        _registry = None


def reset_registry() -> None:
    """Forget the plugin manager and registry (the next lookup reloads everything)."""
    global _pm, _registry
    with _lock:
        _pm = None
        _registry = None
