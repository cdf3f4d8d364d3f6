"""Corrupt sparse index structures are refused before compiled code reads them.

SciPy's ``csr_matrix((data, indices, indptr), shape)`` does not check the indices, and scipy's
conversions and products, scikit-learn's validation and sqnopt's kernels all trust them: an
out-of-range column index made ``Solver.fit`` and ``SQNClassifier.predict`` die with SIGSEGV, and
a negative one was read silently out of bounds. Every entry point now raises a ``ValueError``
naming the problem.

The cases run in a child process under ``-X faulthandler`` (a crash there is a failed test
here, with the C traceback in the message, not a dead test run); each case prints a line when it
ends, so a crash is pinned on the case that caused it and the child restarts after it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from sqnopt.data import check_matrix, check_sparse_structure

from tests.conftest import sqnopt_env

# name -> (builder source, expected message fragment); builders make a (2 x 5) matrix
CORRUPTIONS = {
    "index_too_large": ("sp.csr_matrix((np.ones(2), np.array([10**7, 0]), np.array([0, 1, 2])), "
                        "shape=(2, 5))", "column index 10000000 (row 0), out of range for 5"),
    "index_equal_to_width": ("sp.csr_matrix((np.ones(2), np.array([1, 5]), np.array([0, 1, 2])), "
                             "shape=(2, 5))", "column index 5 (row 1), out of range"),
    "negative_index": ("sp.csr_matrix((np.ones(2), np.array([-3, 0]), np.array([0, 1, 2])), "
                       "shape=(2, 5))", "negative column index -3 (row 0)"),
    "indptr_decreasing": ("sp.csr_matrix((np.ones(3), np.array([0, 1, 2]), np.array([0, 3, 1])), "
                          "shape=(2, 5))", "indptr decreases at row 1"),
    "indptr_past_end": ("sp.csr_matrix((np.ones(2), np.array([0, 1]), np.array([0, 1, 2])), "
                        "shape=(2, 5))", "indptr ends at 900"),
    "csc_bad_row": ("sp.csc_matrix((np.ones(2), np.array([7, 0]), np.array([0, 1, 2, 2, 2, 2])), "
                    "shape=(2, 5))", "row index 7"),
    "csr_array": ("sp.csr_array((np.ones(2), np.array([10**7, 0]), np.array([0, 1, 2])), "
                  "shape=(2, 5))", "column index 10000000"),
}
# indptr_past_end: the builder's indptr is fixed after construction (scipy's constructor would
# refuse it), the way a corrupted matrix arrives from elsewhere
_FIXUPS = {"indptr_past_end": "X.indptr = np.array([0, 1, 900], dtype=X.indptr.dtype)"}

ENTRY_POINTS = {
    "Solver.fit": "Solver(max_epochs=2, random_state=0).fit(X, y)",
    "Solver.fit(regularized intercept)":
        "Solver(max_epochs=2, random_state=0, fit_intercept='regularized').fit(X, y)",
    "Solver.init_state": "Solver(random_state=0).init_state(X, y)",
    "Solver.rebind": "s = Solver(random_state=0); s.rebind(s.init_state(Xok, y), X, y)",
    "Trainer.fit": "Trainer(max_epochs=1, random_state=0).fit(X, y)",
    "Trainer.partial_fit": "Trainer(random_state=0).partial_fit(X, y, classes=[-1.0, 1.0])",
    "SQNClassifier.fit": "SQNClassifier(max_iter=2, random_state=0).fit(X, y)",
    "SQNClassifier.partial_fit":
        "SQNClassifier(random_state=0).partial_fit(X, y, classes=[-1.0, 1.0])",
    "SQNClassifier.predict": "fitted.predict(X)",
    "SQNClassifier.decision_function": "fitted.decision_function(X)",
    "SQNClassifier.predict_proba": "fitted.predict_proba(X)",
    "SQNClassifier.score": "fitted.score(X, y)",
    "LinearModel.predict": "fitted.to_model().predict(X)",
    "KernelPegasos.fit": "KernelPegasos(lam=0.1, max_iter=5, random_state=0).fit(X, y)",
}

_CHILD = """
import json, sys, traceback
import numpy as np, scipy.sparse as sp
from sqnopt import Solver
from sqnopt.estimators import SQNClassifier
from sqnopt.kernel import KernelPegasos
from sqnopt.training import Trainer

y = np.array([1.0, -1.0])
Xok = sp.csr_matrix(np.eye(2, 5))
fitted = SQNClassifier(max_iter=2, random_state=0).fit(Xok, y)
for case, (build, fixup, entry) in json.loads(sys.argv[1]).items():
    X = eval(build)
    if fixup:
        exec(fixup)
    try:
        exec(entry)
        outcome = "accepted"
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    print(json.dumps([case, outcome]), flush=True)
"""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Run every (corruption, entry point) case; a case that kills the child is recorded as
    ``crashed`` with the child's stderr, and the child restarts with the cases after it."""
    todo = {f"{c}|{e}": (CORRUPTIONS[c][0], _FIXUPS.get(c, ""), ENTRY_POINTS[e])
            for c in CORRUPTIONS for e in ENTRY_POINTS}
    seen: dict[str, str] = {}
    while todo:
        proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c",
                               textwrap.dedent(_CHILD), json.dumps(todo)],
                              capture_output=True, text=True, timeout=300,
                              cwd=tmp_path_factory.getbasetemp(), env=sqnopt_env())
        for line in proc.stdout.splitlines():
            if line.startswith("["):
                case, outcome = json.loads(line)
                seen[case] = outcome
                del todo[case]
        if todo and proc.returncode != 0:
            case = next(iter(todo))
            seen[case] = f"crashed (exit {proc.returncode}): {proc.stderr[-2000:]}"
            del todo[case]
        elif todo:
            raise AssertionError(f"the child stopped early: {proc.stderr[-2000:]}")
    return seen


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_entry_point_refuses_corrupt_structure(outcomes: dict[str, str], entry: str,
                                               corruption: str) -> None:
    outcome = outcomes[f"{corruption}|{entry}"]
    assert outcome.startswith("ValueError: X: "), outcome
    assert CORRUPTIONS[corruption][1] in outcome


def _csr(indices: list[int], indptr: list[int], shape: tuple[int, int] = (2, 5)) -> sp.csr_matrix:
    return sp.csr_matrix((np.ones(len(indices)), np.array(indices), np.array(indptr)), shape=shape)


def test_other_formats_and_inconsistent_lengths() -> None:
    coo = sp.coo_matrix((np.ones(2), (np.array([0, 1]), np.array([0, 1]))), shape=(2, 5))
    coo.col = np.array([0, 9])  # corrupted after scipy's constructor checked it
    with pytest.raises(ValueError, match=r"column index 9 \(entry 1\)"):
        check_matrix(coo)
    coo.col = np.array([0, -1])
    with pytest.raises(ValueError, match=r"negative column index -1"):
        check_matrix(coo)
    X = _csr([0, 1], [0, 1, 2])
    X.indptr = np.array([0, 1, 2, 2])
    with pytest.raises(ValueError, match=r"indptr has 4 entries .* needs 3"):
        check_matrix(X)
    X = _csr([0, 1], [0, 1, 2])
    X.data = np.ones(5)
    with pytest.raises(ValueError, match=r"5 stored values but 2 indices"):
        check_matrix(X)
    X = _csr([0, 1], [0, 1, 2])
    X.indptr = np.array([1, 1, 2])
    with pytest.raises(ValueError, match=r"indptr starts at 1"):
        check_matrix(X)
    X = _csr([0, 1], [0, 1, 2])
    X.indices = X.indices.astype(np.float64)
    with pytest.raises(ValueError, match=r"not a 1-D integer array"):
        check_matrix(X)
    lil = sp.lil_matrix((2, 5))
    lil.rows[0] = [7]
    lil.data[0] = [1.0]
    with pytest.raises(ValueError, match=r"column index 7"):  # range checked after conversion
        check_matrix(lil)
    lil.data[0] = [1.0, 2.0]
    with pytest.raises(ValueError, match=r"LIL rows and data"):
        check_matrix(lil)


def test_valid_structures_pass_unchanged_and_are_checked_once(monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    rng = np.random.default_rng(0)
    A = sp.random(30, 12, density=0.3, random_state=0, format="csr")
    for fmt in ("csr", "csc", "coo", "bsr", "lil", "dok", "dia"):
        Y = A.asformat(fmt)
        check_sparse_structure(Y)
        np.testing.assert_array_equal(check_matrix(Y).toarray(), A.toarray())
    # trailing storage past indptr[-1] is legal in scipy and ignored (not copied)
    B = sp.csr_matrix((np.r_[A.data, 9.0, 9.0], np.r_[A.indices, 0, 0], A.indptr), shape=A.shape)
    out = check_matrix(B)
    assert out.nnz == A.nnz and out.data.shape == (A.nnz,)
    # a checked copy passed back in (estimator -> Trainer -> Solver) is not checked again
    from sqnopt.data import _dataset

    calls = []
    real = _dataset._check_compressed
    monkeypatch.setattr(_dataset, "_check_compressed", lambda X, n: (calls.append(1), real(X, n)))
    Xc = check_matrix(A)
    assert len(calls) == 1 and not Xc.indices.flags.writeable
    assert check_matrix(Xc) is Xc  # neither checked nor copied again
    assert len(calls) == 1
    Xc2 = Xc.copy()  # a new object (writeable arrays): checked again
    check_matrix(Xc2)
    assert len(calls) == 2
    y = np.where(rng.random(30) < 0.5, -1.0, 1.0)
    from sqnopt import Solver

    calls.clear()
    Solver(max_epochs=1, random_state=0).fit(A, y)
    assert len(calls) == 1


def test_compiled_row_view_guards_its_bounds() -> None:
    from sqnopt.data import CSRRows64

    y = np.array([1.0, -1.0])
    w = np.ones(2)
    ok = dict(data=np.ones(2), indices=np.array([0, 1], dtype=np.int32),
              indptr=np.array([0, 1, 2], dtype=np.intp))
    CSRRows64(ok["data"], ok["indices"], ok["indptr"], 5, y, w, w, False)
    bad_cases = [
        (dict(ok, indices=np.array([0, 5], dtype=np.int32)), "column index"),
        (dict(ok, indices=np.array([-1, 0], dtype=np.int32)), "column index"),
        (dict(ok, indptr=np.array([0, 2, 1], dtype=np.intp)), "indptr decreases"),
        (dict(ok, indptr=np.array([0, 1, 3], dtype=np.intp)), "indptr ends at 3"),
        (dict(ok, indptr=np.array([1, 1, 2], dtype=np.intp)), "starts at 1"),
    ]
    for kw, match in bad_cases:
        with pytest.raises(ValueError, match=match):
            CSRRows64(kw["data"], kw["indices"], kw["indptr"], 5, y, w, w, False)
    with pytest.raises(ValueError, match="one per row"):
        CSRRows64(ok["data"], ok["indices"], ok["indptr"], 5, np.ones(1), w, w, False)


def test_one_vs_rest_problems_share_one_copy_of_sparse_data() -> None:
    """The Trainer's checked copy is passed to every one-vs-rest solver without another copy
    (before: one more copy of X per class)."""
    from sqnopt.training import Trainer

    rng = np.random.default_rng(0)
    X = sp.random(60, 8, density=0.4, random_state=1, format="csr")
    y = rng.integers(0, 4, 60)
    trainer = Trainer(loss="hinge", max_epochs=1, tol=None, random_state=0)
    trainer.fit(X, y)
    states = trainer._states
    assert states is not None and len(states) == 4
    assert all(s.data.X is states[0].data.X for s in states)
    assert states[0].data.X is not X and X.indices.flags.writeable  # the user's is untouched
