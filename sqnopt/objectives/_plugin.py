"""Built-in objectives, registered through the same hook as third-party plugins."""

from sqnopt.objectives._components import Hinge, LogLoss, SquaredHinge
from sqnopt.objectives._loglinear_components import BinaryLogistic, LogLinear, Softmax
from sqnopt.objectives._regression_components import Huber, Poisson, SquaredError
from sqnopt.registry._registry import hookimpl
from sqnopt.registry.hookspecs import RegisterFn


@hookimpl
def sqnopt_register_objectives(register: RegisterFn) -> None:
    register("squared_hinge", SquaredHinge, aliases=("hinge2", "squared-hinge"))
    register("logloss", LogLoss, aliases=("logistic", "log_loss", "log"))
    register("hinge", Hinge)
    register("binary_logistic", BinaryLogistic, aliases=("logistic_loglinear",))
    register("softmax", Softmax, aliases=("multinomial", "multinomial_logistic"))
    register("loglinear", LogLinear, aliases=("log_linear",))
    register("squared_error", SquaredError, aliases=("squared_loss", "least_squares", "ridge"))
    register("huber", Huber)
    register("poisson", Poisson)
