"""Built-in penalties, registered through the same hook as third-party plugins."""

from sqnopt.penalties._components import L1, L2, ElasticNet
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_penalties(register: RegisterFn) -> None:
    register("l2", L2, aliases=("ridge",))
    register("l1", L1, aliases=("lasso",))
    register("elasticnet", ElasticNet, aliases=("elastic_net",))
