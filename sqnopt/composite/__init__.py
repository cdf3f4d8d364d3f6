r"""Composite objectives: a smooth loss plus an L1 or elastic-net penalty.

``F(w) = f(w) + P(w)`` with ``f`` any smooth objective of :mod:`sqnopt.objectives` (its
``lam``, an L2 term, included) and ``P`` a penalty of :mod:`sqnopt.penalties`
(``alpha (l1_ratio ||w_reg||_1 + (1 - l1_ratio)/2 ||w_reg||^2)``, intercepts never penalised).
:func:`solve_composite` minimises it full batch and deterministically with OWL-QN (orthant-wise
L-BFGS; Andrew & Gao, ICML 2007) or newGLMNET (proximal Newton with coordinate descent; Yuan,
Ho & Lin, JMLR 2012) -- on a quadratic loss over the solves of a path, from its Gram matrix
formed once (:func:`gram_newglmnet`); :mod:`sqnopt.composite.reference` holds the NumPy twins
of the loops.
"""

from sqnopt.composite._solve import (
    CompositeResult,
    Gram,
    choose_composite_method,
    composite_problem,
    form_gram,
    gram_newglmnet,
    newglmnet,
    owlqn,
    solve_composite,
)

__all__ = ["CompositeResult", "Gram", "choose_composite_method", "composite_problem",
           "form_gram", "gram_newglmnet", "newglmnet", "owlqn", "solve_composite"]
