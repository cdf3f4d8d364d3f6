"""Built-in gradient estimators, registered through the same hook as third-party plugins."""

from sqnopt.gradients._components import SAGA, SVRG, Minibatch, OverlapBatch, ProgressiveBatch
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_gradient_estimators(register: RegisterFn) -> None:
    register("minibatch", Minibatch, aliases=("sgd", "plain"))
    register("svrg", SVRG)
    register("saga", SAGA)
    register("progressive", ProgressiveBatch, aliases=("progressive_batch",))
    register("overlap", OverlapBatch, aliases=("multibatch",))
