"""The installed plugin: discovered through its entry point, every component conformant,
each compiled kernel equal to its Python twin iterate by iterate, on sqnopt's fast paths,
and resumed exactly from a checkpoint or a pickle."""

from __future__ import annotations

import dataclasses
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt import Constant, Decaying, Fixed, LogLoss, SlowPathWarning, Solver, SquaredHinge
from sqnopt.datasets import make_boxes
from sqnopt.registry import get_registry, reset_registry
from sqnopt_extras import LSR1, SARAH, DecayingPolyak, ModifiedHuber
from sqnopt_extras.reference import (
    DecayingPolyakNumPy,
    LSR1NumPy,
    ModifiedHuberNumPy,
    SARAHNumPy,
    modified_huber_dloss,
    modified_huber_loss,
)

COMPILED = (ModifiedHuber(), LSR1(), SARAH(), DecayingPolyak())
TWINS = (ModifiedHuberNumPy(), LSR1NumPy(), SARAHNumPy(), DecayingPolyakNumPy())


@pytest.fixture(autouse=True)
def fresh():
    reset_registry()
    yield
    reset_registry()


def _data(n=400, d=12, seed=0, sparse=False):
    X, y = make_boxes(n, d, random_state=seed)
    if sparse:
        rng = np.random.default_rng(seed)
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.3))
    return X, y


def _iterates(make, X, y):
    """The result and the iterate after every iteration of ``make(callback=...).fit(X, y)``."""
    ws: list[np.ndarray] = []
    res = make(callback=lambda info: ws.append(info.w.copy())).fit(X, y)
    return res, np.array(ws)


def _wide_sparse(n=2000, d=5000, seed=0):
    """Sparse rows of about 10 stored values among 5000 features: a batch's entries are few
    against the features, where the O(nnz) iterates pay."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.002, format="csr", random_state=rng)
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


# ---- discovery ---------------------------------------------------------------------------------

def test_discovered_through_the_entry_point():
    reg = get_registry()
    for kind, name, cls in (("objective", "modified_huber", ModifiedHuber),
                            ("curvature", "lsr1", LSR1), ("gradient", "sarah", SARAH),
                            ("step", "polyak_decay", DecayingPolyak)):
        entry = reg.get(kind, name)
        assert entry.source == "extras"
        assert reg.create(kind, name) == cls()
    assert reg.get("curvature", "l_sr1") is reg.get("curvature", "lsr1")


# ---- conformance -------------------------------------------------------------------------------

#: Conformance checks a component is known to fail, with the reason: strict xfails, so that the
#: fix makes the test fail until the entry goes.
KNOWN_FAILURES: dict[str, str] = {}


def _conformance_cases():
    from sqnopt.testing import component_checks

    cases = []
    for component in COMPILED + TWINS:
        for name, check in component_checks(component):
            base = name.split("[", 1)[0]
            marks = ([pytest.mark.xfail(reason=KNOWN_FAILURES[base], strict=True)]
                     if base in KNOWN_FAILURES else [])
            cases.append(pytest.param(check, id=f"{component.name}-{base}", marks=marks))
    return cases


@pytest.mark.parametrize("check", _conformance_cases())
def test_conformance(check):
    """sqnopt.testing's checks: configuration and registry round trip, kernel and flags,
    finite differences and capabilities (objective), descent directions (L-SR1), estimates
    (SARAH), step_at (the Polyak step), state across a checkpoint file, memory, and the
    compiled and Python loops bit for bit."""
    check()


# ---- the modified-Huber loss -------------------------------------------------------------------

MARGINS = np.array([-1e8, -1e4, -37.0, -1.5, -1.0 - 1e-7, -1.0, -1.0 + 1e-7, -0.3, 0.0, 0.5,
                    1.0 - 1e-7, 1.0, 1.0 + 1e-7, 3.0, 1e4, 1e8])


def test_modified_huber_values_and_derivatives_at_every_margin():
    """One sample per margin, ``x = z``, ``w = 1``, ``y = 1``: the kernel's value and gradient
    are the loss and its derivative, against central finite differences in ``w`` (the loss is
    piecewise quadratic and C^1, so a central difference is exact up to rounding within a piece
    and within O(h) across a join),
    continuous across ``z = -1`` and ``z = 1``, finite at extreme margins."""
    from sqnopt.data import prepare

    for z in MARGINS:
        X, y = np.array([[z], [1.0]]), np.array([1.0, -1.0])
        # the second sample (margin -1: loss 4, slope -4, at x = 1) has weight 0
        kernel = ModifiedHuber(lam=0.0).init(prepare(X, y, sample_weight=[1.0, 0.0]))
        w = np.array([1.0])
        g = np.zeros(1)
        f = kernel.full_gradient(w, g)
        loss = float(modified_huber_loss(np.array([z]))[0])
        dloss = float(modified_huber_dloss(np.array([z]))[0])
        assert np.isfinite(f) and np.isfinite(g).all()
        assert f == pytest.approx(loss, rel=1e-15, abs=0)
        assert g[0] == pytest.approx(dloss * z, rel=1e-15, abs=0)
        h = 1e-6           # the margin moves by h z: across a join, an O(h) error (C^1 loss)
        fd = (kernel.value(w + h) - kernel.value(w - h)) / (2 * h)
        lo, hi = sorted((z * (1 - h), z * (1 + h)))
        joins = any(lo < j < hi for j in (-1.0, 1.0))   # the second derivative jumps by 2
        assert fd == pytest.approx(g[0], rel=1e-5, abs=1e-9 + (2 * h * z * z if joins else 0))
    # C^1 at the joins: the two pieces' values and slopes agree at z = -1; zero beyond z = 1
    assert modified_huber_loss(np.array([-1.0 - 1e-12]))[0] == pytest.approx(4.0, rel=1e-11)
    assert modified_huber_dloss(np.array([-1.0 - 1e-12, -1.0 + 1e-12])) == \
        pytest.approx([-4.0, -4.0], rel=1e-11)
    assert modified_huber_loss(np.array([1.0, 2.0])).tolist() == [0.0, 0.0]


def test_modified_huber_refuses_bad_settings_and_labels():
    with pytest.raises(ValueError, match="lam"):
        ModifiedHuber(lam=-1.0)
    with pytest.raises(ValueError, match="lam"):
        ModifiedHuber(lam=float("nan"))
    X, _ = _data(40, 3)
    with pytest.raises(ValueError):
        Solver(ModifiedHuber(), "sgd", Fixed(4), Constant(0.1), max_iter=2).fit(
            X, np.arange(40.0) % 3)


# ---- compiled kernels against their Python twins, iterate by iterate ---------------------------

def _compare(compiled, python, X, y, rtol=0.0, **kw):
    """``Solver(*compiled, **kw)`` against ``Solver(*python, **kw)``: the iterates after every
    iteration agree to ``rtol`` relative to the iterate's largest entry (``0``: bit for bit)
    and the secant pairs were accepted and skipped alike."""
    def make(args):
        return lambda **cb: Solver(*args[:4], gradient=args[4], report_every=1, **kw, **cb)

    rc, wc = _iterates(make(compiled), X, y)
    rp, wp = _iterates(make(python), X, y)
    assert rc.compiled and not rp.compiled and rp.path == "python"
    assert wc.shape == wp.shape and wc.shape[0] >= 20
    if rtol == 0.0:
        np.testing.assert_array_equal(wc, wp)
    else:
        scale = np.max(np.abs(wc), axis=1, keepdims=True) + 1e-300
        np.testing.assert_array_less(np.abs(wc - wp) / scale, rtol)
    assert (rc.n_pairs_accepted, rc.n_pairs_skipped) == (rp.n_pairs_accepted, rp.n_pairs_skipped)
    return rc


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_each_compiled_component_matches_its_twin(sparse):
    """The L-SR1, SARAH and Polyak twins do the compiled kernels' operations in their order
    (the L-SR1 twin's dot products in ``sq_dot``'s), so with the same compiled objective the
    iterates agree bit for bit; the objective's twin sums with NumPy, and agrees to rounding
    (along stochastic gradient steps, which do not amplify it, and a few line-search L-BFGS
    steps)."""
    X, y = _data(sparse=sparse)
    kw = dict(random_state=0, max_iter=60)
    _compare((ModifiedHuber(1e-3), "sgd", Fixed(10), Decaying(0.5, 20), "minibatch"),
             (ModifiedHuberNumPy(1e-3), "sgd", Fixed(10), Decaying(0.5, 20), "minibatch"), X, y,
             rtol=1e-12, **kw)
    _compare((ModifiedHuber(1e-3), "lbfgs", Fixed(40), "armijo", "minibatch"),
             (ModifiedHuberNumPy(1e-3), "lbfgs", Fixed(40), "armijo", "minibatch"), X, y,
             rtol=1e-10, random_state=0, max_iter=20)
    # L-SR1, on the logistic loss (curved everywhere) and the modified Huber
    for obj in (LogLoss(1e-3), ModifiedHuber(1e-3)):
        res = _compare((obj, LSR1(memory=5), Fixed(100), "armijo", "minibatch"),
                       (obj, LSR1NumPy(memory=5), Fixed(100), "armijo", "minibatch"), X, y, **kw)
        assert res.n_pairs_accepted > 10
    # SARAH, restarted every 120 samples
    _compare((LogLoss(1e-3), "sgd", Fixed(10), Constant(0.5), SARAH(period=120)),
             (LogLoss(1e-3), "sgd", Fixed(10), Constant(0.5), SARAHNumPy(period=120)), X, y,
             **kw)
    # the decaying Polyak step (T0 small: the cap binds within the run)
    _compare((SquaredHinge(1e-3), "sgd", Fixed(10), DecayingPolyak(eps_max=2.0, T0=5.0),
              "minibatch"),
             (SquaredHinge(1e-3), "sgd", Fixed(10), DecayingPolyakNumPy(eps_max=2.0, T0=5.0),
              "minibatch"), X, y, **kw)


def test_three_compiled_against_three_twins_bit_for_bit():
    """L-SR1 directions from SARAH estimates with the Polyak step, on the compiled objective:
    the same iterates, bit for bit, in the compiled and the Python loop; the run moves (the
    step is 0 only where ``s(w, B)'d <= 0``, rarely at these settings)."""
    X, y = _data(600, 10, seed=1)
    steps: list[float] = []
    res = _compare((ModifiedHuber(1e-3), LSR1(memory=4), Fixed(50),
                    DecayingPolyak(eps_max=0.1, T0=30.0), SARAH(period=200)),
                   (ModifiedHuber(1e-3), LSR1NumPy(memory=4), Fixed(50),
                    DecayingPolyakNumPy(eps_max=0.1, T0=30.0), SARAHNumPy(period=200)), X, y,
                   random_state=0, max_iter=60)
    Solver(ModifiedHuber(1e-3), LSR1(memory=4), Fixed(50), DecayingPolyak(eps_max=0.1, T0=30.0),
           gradient=SARAH(period=200), random_state=0, max_iter=60, report_every=1,
           callback=lambda info: steps.append(info.step)).fit(X, y)
    assert sum(s > 0 for s in steps) >= 55 and res.n_pairs_accepted >= 55
    assert res.fun < 0.05


@pytest.mark.parametrize("step", [DecayingPolyak(), DecayingPolyakNumPy()],
                         ids=["compiled", "numpy"])
def test_a_point_step_with_a_variance_reduced_estimate_moves(step):
    X, y = _data()
    steps: list[float] = []
    Solver(LogLoss(1e-3), "sgd", Fixed(10), step, gradient=SARAH(), random_state=0,
           max_iter=10, report_every=1, callback=lambda info: steps.append(info.step)).fit(X, y)
    assert min(steps) > 0


def test_lsr1_follows_indefinite_curvature_and_keeps_descending():
    """Pairs of an indefinite quadratic (negative curvature, which BFGS must skip) are stored;
    every direction is still a descent direction, and the model satisfies the newest secant
    equation ``H y = s`` where it is used."""
    rng = np.random.default_rng(5)
    n = 8
    A = np.diag(np.r_[-1.0, np.linspace(0.5, 4.0, n - 1)])
    for kernel in (LSR1(memory=6).init(_problem(n)), LSR1NumPy(memory=6).init(_problem(n))):
        codes = [kernel.update_pair(v, A @ v) for v in rng.normal(size=(6, n))]
        assert codes.count(1) >= 5
        for g in rng.normal(size=(50, n)):
            d = np.zeros(n)
            kernel.direction(g, d)
            assert g @ d > 0
        v = rng.normal(size=n)
        assert kernel.update_pair(v, A @ v) == 1
        Hy = np.zeros(n)
        kernel.direction(A @ v, Hy)
        if (A @ v) @ v > 0:             # H y = s is then a descent direction: not replaced
            np.testing.assert_allclose(Hy, v, rtol=1e-8, atol=1e-10)


def test_lsr1_compact_form_is_the_recursive_sr1_update():
    """The compact form (Byrd, Nocedal & Schnabel 1994, Thm. 5.1) equals the textbook SR1
    recursion ``H <- H + u u' / (u'y)``, ``u = s - H y``, from ``H_0 = gamma I`` over the stored
    pairs (the twin's undamped ``H x``; the compiled kernel's directions equal it where the
    safeguard keeps them), and on a quadratic it satisfies every stored secant equation
    ``H y_j = s_j`` (the hereditary property, Nocedal & Wright Thm. 6.1)."""
    rng = np.random.default_rng(7)
    n, m = 6, 4
    Q = rng.normal(size=(n, n))
    A = Q @ Q.T + np.eye(n)
    twin, compiled = LSR1NumPy(memory=m).init(_problem(n)), LSR1(memory=m).init(_problem(n))
    pairs = [(v, A @ v) for v in rng.normal(size=(m + 2, n))]     # the first two are dropped
    for v, r in pairs:
        assert twin.update_pair(v, r) == compiled.update_pair(v, r) == 1
    H = twin.gamma * np.eye(n)
    for v, r in pairs[-m:]:
        u = v - H @ r
        H = H + np.outer(u, u) / (u @ r)
    for x in list(rng.normal(size=(5, n))) + [r for _, r in pairs[-m:]]:
        Hx, _, _ = twin._apply(x)
        np.testing.assert_allclose(Hx, H @ x, rtol=1e-9, atol=1e-12)
        d = np.zeros(n)
        compiled.direction(x, d)
        if x @ Hx > 1e-8 * np.linalg.norm(x) * np.linalg.norm(Hx):
            np.testing.assert_array_equal(d, Hx)
    for v, r in pairs[-m:]:
        np.testing.assert_allclose(twin._apply(r)[0], v, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model", [LSR1(memory=3), LSR1NumPy(memory=3)], ids=["compiled", "numpy"])
def test_lsr1_falls_back_to_the_scaled_gradient_on_an_ascent_direction(model):
    """One pair of negative curvature, ``s = e1``, ``y = -e1``: ``gamma`` stays 1 and
    ``H = I + u u'/(u'y)`` with ``u = s - y = 2 e1``, ``u'y = -2``, so ``H e1 = -e1``, an
    ascent direction for ``g = e1``: the kernel returns ``gamma g`` instead."""
    kernel = model.init(_problem(3))
    e1 = np.array([1.0, 0.0, 0.0])
    assert kernel.update_pair(e1, -e1) == 1 and kernel.gamma == 1.0
    d = np.zeros(3)
    kernel.direction(e1, d)
    assert d.tolist() == [1.0, 0.0, 0.0] and kernel.n_fallbacks == 1
    kernel.direction(np.array([0.0, 1.0, 0.0]), d)            # H e2 = e2: no fallback
    assert d.tolist() == [0.0, 1.0, 0.0] and kernel.n_fallbacks == 1


@pytest.mark.parametrize("model", [LSR1(memory=3), LSR1NumPy(memory=3)], ids=["compiled", "numpy"])
def test_lsr1_skips_a_pair_it_already_satisfies(model):
    kernel = model.init(_problem(4))
    v, r = np.array([1.0, 0.0, 0.0, 0.0]), np.array([2.0, 0.0, 0.0, 0.0])
    assert kernel.update_pair(v, r) == 1          # gamma = 0.25, H = diag(0.5, 0.25, ...)
    assert kernel.update_pair(v, r) == 0          # u = v - H r = 0: skipped
    assert kernel.update_pair(v, np.full(4, np.nan)) == 2 and kernel.count == 0


@pytest.mark.parametrize("model", [SARAH(period=12), SARAHNumPy(period=12)],
                         ids=["compiled", "numpy"])
def test_sarah_is_its_recursion_and_restarts_every_period(model):
    """``v_0 = grad F(w_0)``, ``v_t = s(w_t, B_t) - s(w_{t-1}, B_t) + v_{t-1}``, and a restart
    from the full gradient once ``period`` batch samples were estimated; ``extra`` counts the
    full pass (N) at a restart and the second batch gradient (|B|) otherwise."""
    from sqnopt.data import prepare

    X, y = _data(50, 4)
    obj = LogLoss(1e-2).init(prepare(X, y))
    kernel = model.init(_problem(obj.n_params))
    kernel.bind(obj)
    rng = np.random.default_rng(11)
    v_prev = w_prev = None
    for t in range(7):
        w = rng.normal(size=obj.n_params)
        batch = rng.integers(0, 50, size=4).astype(np.intp)
        v, plain = np.zeros(obj.n_params), np.zeros(obj.n_params)
        f, extra = kernel.estimate(obj, w, batch, v, plain)
        s_w, s_prev = np.zeros(obj.n_params), np.zeros(obj.n_params)
        assert f == obj.gradient(w, batch, s_w)
        np.testing.assert_array_equal(plain, s_w)
        if t % 3 == 0:                  # 3 batches of 4 samples make a period of 12
            full = np.zeros(obj.n_params)
            obj.full_gradient(w, full)
            np.testing.assert_array_equal(v, full)
            assert extra == 50
        else:
            obj.gradient(w_prev, batch, s_prev)
            np.testing.assert_array_equal(v, (s_w - s_prev) + v_prev)
            assert extra == 4
        v_prev, w_prev = v, w
    assert kernel.get_state()["n_restarts"] == 3


@pytest.mark.parametrize("model", [LSR1(memory=3), LSR1NumPy(memory=3)], ids=["compiled", "numpy"])
def test_lsr1_refuses_a_checkpoint_of_another_configuration(model):
    from sqnopt.checkpoint import CheckpointError

    kernel = model.init(_problem(4))
    rng = np.random.default_rng(2)
    for v in rng.normal(size=(3, 4)):
        kernel.update_pair(v, 2.0 * v + 0.1 * rng.normal(size=4))
    state = kernel.get_state()
    with pytest.raises(CheckpointError, match="memory"):
        LSR1(memory=2).init(_problem(4)).set_state(state)
    with pytest.raises(CheckpointError):
        model.init(_problem(5)).set_state(state)          # pairs of another length
    bad = dict(state, gamma=-1.0)
    with pytest.raises(CheckpointError, match="gamma"):
        model.init(_problem(4)).set_state(bad)


def _problem(n):
    from sqnopt.interfaces import Problem

    return Problem(n_samples=10, n_features=n, dim=n, n_blocks=1, n_params=n, lam=0.0,
                   fit_intercept=False, capabilities=frozenset({"smooth"}))


# ---- the fast paths ----------------------------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_compiled_components_run_on_the_fast_paths(sparse):
    """The compiled loop, and on sparse rows the O(nnz) iterate wherever the composition admits
    it; no SlowPathWarning (pytest turns warnings into errors)."""
    X, y = _wide_sparse() if sparse else _data(2000, 300)
    kw = dict(random_state=0, max_iter=40)
    cases = {
        # the objective on the scaled iterate (plain gradient) and the lazy one (SVRG's table)
        "huber+sgd": (Solver(ModifiedHuber(), "sgd", Fixed(8), Decaying(0.1, 50), **kw),
                      "scaled"),
        "huber+svrg": (Solver(ModifiedHuber(), "sgd", Fixed(8), Constant(0.05), gradient="svrg",
                              **kw),
                       "lazy"),
        # a learnt direction, a dense recursive estimate or a step that sees the point: the
        # generic compiled loop, which is the fast path for them
        "lsr1": (Solver(ModifiedHuber(), LSR1(), Fixed(50), "armijo", **kw),
                 "generic"),
        "sarah+lsr1": (Solver(LogLoss(), LSR1(), Fixed(50), "armijo", gradient=SARAH(), **kw),
                       "generic"),
        "polyak_decay": (Solver(ModifiedHuber(), "sgd", Fixed(8), DecayingPolyak(), **kw),
                         "generic"),
    }
    for label, (solver, sparse_path) in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = solver.fit(X, y)
        assert res.compiled, label
        expected = sparse_path if sparse else "generic"
        assert res.path == expected, (label, res.path, res.path_reason)
        assert res.path_reason
        assert np.isfinite(res.fun)


def test_sarah_with_the_identity_on_sparse_rows_says_it_runs_dense():
    """SARAH's estimate is dense and recursive, with no score table, so the lazy O(nnz) iterate
    cannot run it. It declares dense_estimate: the result's path_reason says so and nothing
    warns (pytest turns warnings into errors); an estimator without the declaration is
    warned about (the next test)."""
    X, y = _wide_sparse()
    kw = dict(random_state=0, max_iter=20)
    res = Solver(LogLoss(), "sgd", Fixed(8), Constant(0.05), gradient=SARAH(), **kw).fit(X, y)
    assert res.path == "generic" and "dense_estimate" in res.path_reason
    res = Solver(LogLoss(), "sgd", Fixed(8), Constant(0.05), gradient=SARAH(), path="generic",
                 **kw).fit(X, y)
    assert res.path == "generic" and res.compiled


def test_an_undeclared_dense_estimator_on_sparse_rows_is_warned_about():
    """The same estimator without dense_estimate is one that could give its kernel a score
    table: sqnopt warns once that it falls off the O(nnz) path, and says how to avoid it."""
    @dataclasses.dataclass(frozen=True)
    class Undeclared(SARAH):
        dense_estimate = False

    X, y = _wide_sparse()
    with pytest.warns(SlowPathWarning, match="score table"):
        res = Solver(LogLoss(), "sgd", Fixed(8), Constant(0.05), gradient=Undeclared(),
                     random_state=0, max_iter=20).fit(X, y)
    assert res.path == "generic"


# ---- exact resume ------------------------------------------------------------------------------

COMPOSITIONS = {
    "modified_huber": dict(objective=ModifiedHuber(1e-3), curvature="lbfgs",
                           gradient="minibatch", step=Decaying(0.05, 100)),
    "lsr1": dict(objective=SquaredHinge(1e-3), curvature=LSR1(memory=4),
                 gradient="minibatch", step="armijo"),
    "sarah": dict(objective=LogLoss(1e-3), curvature="sgd", gradient=SARAH(period=150),
                  step=Constant(0.3)),
    "polyak_decay": dict(objective=SquaredHinge(1e-3), curvature="sgd", gradient="minibatch",
                         step=DecayingPolyak(T0=10.0)),
    "all_four": dict(objective=ModifiedHuber(1e-3), curvature=LSR1(memory=4),
                     gradient=SARAH(period=200), step=DecayingPolyak(eps_max=0.1, T0=30.0),
                     size=50),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_checkpoint_resume_is_exact(name, sparse):
    """Run 30 iterations, checkpoint (through a file), restore and run 30 more: the same
    iterate, bit for bit, as 60 uninterrupted iterations."""
    c = COMPOSITIONS[name]
    X, y = _data(600, 10, seed=1, sparse=sparse)
    solver = Solver(c["objective"], c["curvature"], Fixed(c.get("size", 10)), c["step"],
                    gradient=c["gradient"], random_state=0)
    straight = solver.init_state(X, y)
    solver.run(straight, max_iter=60)
    first = solver.init_state(X, y)
    solver.run(first, max_iter=30)
    resumed = solver.restore(_through_file(first.checkpoint()), X, y)
    solver.run(resumed, max_iter=30)
    np.testing.assert_array_equal(resumed.w, straight.w)


def _through_file(checkpoint):
    import tempfile
    from pathlib import Path

    from sqnopt.checkpoint import Checkpoint

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.npz"
        checkpoint.save(path)
        return Checkpoint.load(path)


@pytest.mark.parametrize("name", ["modified_huber", "lsr1", "sarah", "polyak_decay"])
def test_pickled_partial_fit_resumes_exactly(name):
    from sqnopt import SQNClassifier

    c = COMPOSITIONS[name]
    kw = dict(loss=c["objective"].name, alpha=1e-3, curvature=c["curvature"],
              gradient=c["gradient"], schedule=Fixed(10), step=c["step"], random_state=0)
    X, y = _data(600, 10, seed=2)
    whole, split = SQNClassifier(**kw), SQNClassifier(**kw)
    for s in range(0, 600, 100):
        whole.partial_fit(X[s:s + 100], y[s:s + 100], classes=[-1.0, 1.0])
        split.partial_fit(X[s:s + 100], y[s:s + 100], classes=[-1.0, 1.0])
        if s == 200:
            split = pickle.loads(pickle.dumps(split))
    np.testing.assert_array_equal(split.coef_, whole.coef_)
    np.testing.assert_array_equal(split.intercept_, whole.intercept_)
