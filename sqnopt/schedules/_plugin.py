"""Built-in batch schedules, registered through the same hook as third-party plugins."""

from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn
from sqnopt.schedules._components import Fixed, Full, Geometric, Linear


@hookimpl
def sqnopt_register_schedules(register: RegisterFn) -> None:
    register("fixed", Fixed, aliases=("constant",))
    register("linear", Linear)
    register("geometric", Geometric)
    register("full", Full, aliases=("full_batch",))
