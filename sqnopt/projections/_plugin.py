"""Built-in projections, registered through the same hook as third-party plugins."""

from sqnopt.projections._components import L2Ball
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_projections(register: RegisterFn) -> None:
    register("l2ball", L2Ball, aliases=("l2",))
