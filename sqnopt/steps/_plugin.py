"""Built-in step rules, registered through the same hook as third-party plugins."""

from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn
from sqnopt.steps._components import (
    Armijo,
    Constant,
    Decaying,
    InverseSqrt,
    LipschitzStep,
    PegasosStep,
    Polyak,
    ScoreLine,
    Wolfe,
)


@hookimpl
def sqnopt_register_step_rules(register: RegisterFn) -> None:
    register("constant", Constant)
    register("decaying", Decaying, aliases=("inverse_time",))
    register("inverse_sqrt", InverseSqrt, aliases=("invsqrt",))
    register("lipschitz", LipschitzStep, aliases=("inverse_lipschitz",))
    register("pegasos", PegasosStep, aliases=("pegasos_step",))
    register("polyak", Polyak, aliases=("sps",))
    register("armijo", Armijo, aliases=("line_search",))
    register("wolfe", Wolfe, aliases=("strong_wolfe",))
    register("score_line", ScoreLine, aliases=("exact_line",))
