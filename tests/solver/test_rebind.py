"""Solver.rebind: continuing one solve on new data (what partial_fit is built on)."""

from __future__ import annotations

import numpy as np
import pytest

from sqnopt import Solver
from sqnopt.curvature.reference import IdentityNumPy
from sqnopt.datasets import make_boxes


@pytest.mark.parametrize("path", ["compiled", "python"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, "regularized"])
def test_rebind_to_the_same_data_continues_bit_for_bit(path: str, average: bool,
                                                       fit_intercept: bool | str) -> None:
    """Uniform sampling draws from the one bit generator, schedules and steps are functions of
    the iteration counter, so rebinding to identical data must not change a single bit."""
    X, y = make_boxes(500, 8, random_state=1)
    curvature = "identity" if path == "compiled" else IdentityNumPy()
    kw = dict(random_state=3, average=average, fit_intercept=fit_intercept, path=path)
    a = Solver("squared_hinge", curvature, **kw)
    sa = a.init_state(X, y)
    a.run(sa, max_iter=120)
    ra = a.run(sa, max_iter=80)
    b = Solver("squared_hinge", curvature, **kw)
    sb = b.init_state(X, y)
    b.run(sb, max_iter=120)
    assert b.rebind(sb, X.copy(), y.copy()) is sb
    rb = b.run(sb, max_iter=80)
    np.testing.assert_array_equal(ra.w, rb.w)
    assert ra.n_iter == rb.n_iter == 200 and ra.n_samples == rb.n_samples
    assert sb.compiled is (path == "compiled")


def test_rebind_keeps_learned_state_and_rebuilds_data_parts() -> None:
    X, y = make_boxes(400, 5, random_state=2)
    s = Solver("logloss", "identity", ("fixed", {"size": 50}), random_state=0, average=True)
    st = s.init_state(X, y)
    s.run(st, max_iter=30)
    kept = (st.curvature, st.step, st.counters, st.w, st.w_avg, st.history,
            st.sampler.bit_generator)
    old_objective, old_sampler = st.objective, st.sampler
    t = st.t
    s.rebind(st, X[:20], y[:20])
    assert (st.curvature, st.step, st.counters, st.w, st.w_avg, st.history,
            st.sampler.bit_generator) == kept
    assert st.objective is not old_objective and st.sampler is not old_sampler
    assert st.data.n_samples == 20 and st.problem.n_samples == 20
    assert st.schedule.batch_size(1) == 20  # the fixed size 50 is clipped to the new data
    res = s.run(st, max_iter=5)
    assert res.n_iter == t + 5 and res.n_train == 20


def test_rebind_accepts_a_single_class_batch_and_keeps_the_label_set() -> None:
    X, y = make_boxes(300, 4, random_state=3)
    s = Solver("logloss", random_state=0)
    st = s.init_state(X, y)
    s.run(st, max_iter=10)
    pos = y > 0
    s.rebind(st, X[pos], y[pos])
    assert list(st.data.classes) == [-1.0, 1.0] and np.all(st.data.y == 1.0)
    s.run(st, max_iter=10)
    with pytest.raises(ValueError, match="not in classes"):
        s.rebind(st, X[:10], np.full(10, 7.0))


def test_rebind_rejects_other_features_and_injected_sequences() -> None:
    X, y = make_boxes(100, 4, random_state=4)
    s = Solver("logloss", random_state=0)
    st = s.init_state(X, y)
    with pytest.raises(ValueError, match="features"):
        s.rebind(st, X[:, :3], y)
    r = Solver("logloss", fit_intercept="regularized", random_state=0)
    st = r.init_state(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but the solve was started with 4"):
        r.rebind(st, X[:, :3], y)
    seq = Solver("logloss", batch_sequence=np.arange(50))
    st2 = seq.init_state(X, y)
    with pytest.raises(ValueError, match="batch_sequence"):
        seq.rebind(st2, X, y)


def test_rebind_weighted_sampling_uses_the_new_weights() -> None:
    X, y = make_boxes(200, 3, random_state=5)
    s = Solver("logloss", sampling="weighted", schedule=("fixed", {"size": 1}), random_state=0)
    st = s.init_state(X, y)
    s.run(st, max_iter=5)
    w = np.zeros(200)
    w[7] = 1.0  # all the new weight on one sample
    s.rebind(st, X, y, sample_weight=w)
    assert set(st.sampler.draw(20).tolist()) == {7}
