"""Built-in curvature models, registered through the same hook as third-party plugins."""

from sqnopt.curvature._bound_components import QuadraticBound
from sqnopt.curvature._components import (
    LBFGS,
    BoundLBFGS,
    FullBFGS,
    HessianLBFGS,
    Identity,
    Newton,
    NewtonCG,
    RegularizedBFGS,
    TruncatedNewton,
)
from sqnopt.curvature._first_order import AdaGrad
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_curvature_models(register: RegisterFn) -> None:
    register("identity", Identity, aliases=("sgd", "none"))
    register("lbfgs", LBFGS, aliases=("olbfgs",))
    register("bound_lbfgs", BoundLBFGS, aliases=("preconditioned_lbfgs",))
    register("full_bfgs", FullBFGS, aliases=("bfgs", "obfgs"))
    register("regularized_bfgs", RegularizedBFGS, aliases=("res",))
    register("adagrad", AdaGrad, aliases=("diagonal_adagrad",))
    register("quadratic_bound", QuadraticBound, aliases=("sqb",))
    register("hessian_lbfgs", HessianLBFGS, aliases=("sqn", "slbfgs"))
    register("newton", Newton, aliases=("newton_cholesky",))
    register("newton_cg", NewtonCG, aliases=("subsampled_newton", "hessian_free"))
    register("truncated_newton", TruncatedNewton, aliases=("full_newton_cg",))
