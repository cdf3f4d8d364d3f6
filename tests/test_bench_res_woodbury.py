"""The RES Woodbury-over-eigendecomposition prototype (bench/res_woodbury_prototype.py) gives the
Cholesky form's directions: the exactness its docs/curvature.md figures rely on."""

from __future__ import annotations

import numpy as np
import res_woodbury_prototype as proto


def test_woodbury_form_gives_the_cholesky_directions() -> None:
    # k = 3 and 7: several eigendecomposition refreshes, and Woodbury with up to 14 columns
    seconds, err, accepted = proto.compare(n=25, iters=60, ks=[3, 7])
    assert accepted >= 20
    assert set(err) == {"cholesky", "woodbury k=3", "woodbury k=7"}
    assert max(err.values()) < 1e-9


def test_explicit_update_is_in_place_and_matches_the_formula() -> None:
    rng = np.random.default_rng(1)
    n = 6
    A = rng.standard_normal((n, n))
    B = np.asfortranarray(A @ A.T + n * np.eye(n))
    full = B.copy()
    v, r = rng.standard_normal(n), rng.standard_normal(n)
    if v @ r < 0:
        r = -r
    vr = float(v @ r)
    Bv = full @ v
    proto._explicit_update(B, r, vr, Bv, float(v @ Bv))
    expected = full + np.outer(r, r) / vr - np.outer(Bv, Bv) / (v @ Bv) + proto.DELTA * np.eye(n)
    np.testing.assert_allclose(np.triu(B), np.triu(expected), rtol=1e-12, atol=1e-12)
