"""Built-in projections, registered through the same hook as third-party plugins."""

from sqnopt.projections._components import ExpGradPM, L1Ball, L2Ball, LazyProjection
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_projections(register: RegisterFn) -> None:
    register("l2ball", L2Ball, aliases=("l2",))
    register("l1ball", L1Ball, aliases=("l1",))
    register("lazy_projection", LazyProjection, aliases=("dual_averaging",))
    register("eg_pm", ExpGradPM, aliases=("egpm", "exponentiated_gradient_pm"))
