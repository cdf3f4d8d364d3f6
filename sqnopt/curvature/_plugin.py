"""Built-in curvature models, registered through the same hook as third-party plugins."""

from sqnopt.curvature._bound_components import QuadraticBound
from sqnopt.curvature._components import Identity
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_curvature_models(register: RegisterFn) -> None:
    register("identity", Identity, aliases=("sgd", "none"))
    register("quadratic_bound", QuadraticBound, aliases=("sqb",))
