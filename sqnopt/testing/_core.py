"""What every kind's conformance checks share: the kind of a component, the errors and the
report, the small problems the checks run on, bit-for-bit comparison, and the checks that apply
to every kind (configuration, kernel, declared flags, declared state, declared memory, a short
solve).

A *suite* (:class:`Suite`, one subclass per kind) holds one component and the data its checks
run on; :meth:`Suite.checks` lists its checks as ``(name, callable)`` pairs. A check returns
``None`` or a note (something the report should say, e.g. "no declared state") and raises
``AssertionError`` when the component does not conform.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import math
import pickle
import struct
import tempfile
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import numpy as np
import scipy.sparse as sp

from sqnopt.interfaces import (
    BatchSchedule,
    BindingKernelLike,
    Component,
    CurvatureModel,
    GradientEstimator,
    Kind,
    Objective,
    Penalty,
    Problem,
    Projection,
    StepRule,
    kernel_compiled,
)

#: A check: returns ``None`` or a note for the report, raises ``AssertionError`` on failure.
Check = Callable[[], "str | None"]
#: One driven step's observable outputs, in order: ``(what, value)``.
Outputs = list[tuple[str, Any]]

#: The component interfaces and the kind each one is (``Component.kind``).
INTERFACES: tuple[tuple[Kind, type[Component]], ...] = (
    ("objective", Objective),
    ("curvature", CurvatureModel),
    ("gradient", GradientEstimator),
    ("step", StepRule),
    ("schedule", BatchSchedule),
    ("projection", Projection),
    ("penalty", Penalty),
)

#: Steps a kernel is driven before its state is saved, and after (the probe).
WARM_STEPS = 5
PROBE_STEPS = 5
#: Memory-declaration rule: a declaration below ``held / MEMORY_FACTOR - MEMORY_SLACK`` or above
#: ``MEMORY_FACTOR_ABOVE * max(held, MEMORY_FLOOR)`` bytes is not a declaration of what the kernel
#: holds.
MEMORY_FACTOR = 8
MEMORY_SLACK = 16 * 1024
MEMORY_FACTOR_ABOVE = 64
MEMORY_FLOOR = 1 << 20
#: Parameters of the problem the memory declaration is measured on (per block, about).
MEMORY_PARAMS = 160
MEMORY_SAMPLES = 320


class ConformanceError(AssertionError):
    """A component failed a conformance check. The message names the check, the component
    (its ``describe()``) and what differed; the attributes hold the three parts."""

    def __init__(self, check: str, component: str, detail: str) -> None:
        super().__init__(f"{check}[{component}]: {detail}")
        self.check = check
        self.component = component
        self.detail = detail


@dataclass(frozen=True)
class ConformanceReport:
    """What :func:`~sqnopt.testing.check_component` found for a component that passed.

    Attributes
    ----------
    component
        The component's ``describe()``.
    kind
        Its kind, from the interface it implements.
    passed
        The checks run, in order.
    notes
        What some checks have to say beyond passing (check name -> note): a kernel without
        declared state, a capability that could not be exercised, the layout an objective was
        checked on.
    """

    component: str
    kind: Kind
    passed: tuple[str, ...]
    notes: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"{self.kind} {self.component}: {len(self.passed)} checks passed"]
        lines += [f"  {name}: {note}" for name, note in self.notes.items()]
        return "\n".join(lines)


def fail(msg: str) -> NoReturn:
    raise AssertionError(msg)


def component_kind(component: object) -> Kind:
    """The kind of ``component``: the one component interface of :mod:`sqnopt.interfaces` it
    implements (``TypeError`` if it implements none or several)."""
    kinds = [kind for kind, base in INTERFACES if isinstance(component, base)]
    if len(kinds) != 1:
        what = "none" if not kinds else " and ".join(kinds)
        raise TypeError(f"{type(component).__name__} implements {what} of the component "
                        "interfaces of sqnopt.interfaces (Objective, CurvatureModel, "
                        "GradientEstimator, StepRule, BatchSchedule, Projection, Penalty): "
                        "exactly one is needed")
    return kinds[0]


# ---------------------------------------------------------------------------- comparison
def _float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """``None`` if ``a`` and ``b`` are the same bit for bit (arrays: dtype, shape and bytes;
    floats: their bits, so NaN equals NaN and 0.0 differs from -0.0); else where and how they
    first differ."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype != y.dtype:
            return (f"{where}: an array of shape {x.shape} and dtype {x.dtype}, then one of "
                    f"shape {y.shape} and dtype {y.dtype}")
        if x.tobytes() == y.tobytes():
            return None
        if x.dtype.kind in "fiub" and x.size:
            flat_x = np.ascontiguousarray(x).reshape(-1)
            flat_y = np.ascontiguousarray(y).reshape(-1)
            size = flat_x.dtype.itemsize
            bits_x = flat_x.view(np.uint8).reshape(-1, size)
            bits_y = flat_y.view(np.uint8).reshape(-1, size)
            diff = np.flatnonzero(np.any(bits_x != bits_y, axis=1))
            j = int(diff[0])
            gap = ""
            if x.dtype.kind == "f":
                with np.errstate(invalid="ignore"):
                    gap = f", max |diff| {float(np.nanmax(np.abs(flat_x - flat_y))):.3g}"
            return (f"{where}: entry {j} is {flat_x[j]!r}, then {flat_y[j]!r} "
                    f"({diff.shape[0]} of {flat_x.shape[0]} entries differ{gap})")
        return f"{where}: the arrays differ"
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if set(a) != set(b):
            return f"{where}: keys {sorted(map(str, a))}, then {sorted(map(str, b))}"
        for key in a:
            d = first_difference(a[key], b[key], f"{where}.{key}" if where else str(key))
            if d is not None:
                return d
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: {len(a)} items, then {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d is not None:
                return d
        return None
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        if _float_bits(float(a)) == _float_bits(float(b)):
            return None
        return f"{where}: {float(a)!r}, then {float(b)!r}"
    if type(a) is not type(b) and not (isinstance(a, (int, np.integer))
                                       and isinstance(b, (int, np.integer))):
        return f"{where}: a {type(a).__name__} {a!r:.60}, then a {type(b).__name__} {b!r:.60}"
    try:
        same = bool(a == b)
    except Exception:       # values without a plain truth value: compare their reprs
        same = repr(a) == repr(b)
    return None if same else f"{where}: {a!r:.60}, then {b!r:.60}"


def output_difference(first: Outputs, second: Outputs) -> str | None:
    """Where two driven runs first differ (``None``: the same, bit for bit)."""
    for (what, a), (what_b, b) in zip(first, second):
        if what != what_b:
            return f"the runs took different paths: {what!r}, then {what_b!r}"
        d = first_difference(a, b, what)
        if d is not None:
            return d
    if len(first) != len(second):
        return f"{len(first)} outputs, then {len(second)}"
    return None


def copy_tree(state: Any) -> Any:
    """A deep copy of a state tree (arrays copied), to see later whether it was modified."""
    if isinstance(state, np.ndarray):
        return state.copy()
    if isinstance(state, Mapping):
        return {k: copy_tree(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(copy_tree(v) for v in state)
    return copy.deepcopy(state)


def through_file(state: Any) -> Any:
    """``state`` written to a checkpoint file (:meth:`sqnopt.checkpoint.Checkpoint.save`) and
    read back: what a resumed run's ``set_state`` receives."""
    from sqnopt.checkpoint import Checkpoint, read_checkpoint_file

    with tempfile.TemporaryDirectory(prefix="sqnopt-conformance-") as tmp:
        path = Path(tmp) / "state.npz"
        Checkpoint(kind="solver", identity={}, data={}, state={"kernel": state}).save(path)
        return read_checkpoint_file(path).state["kernel"]


def allclose(a: Any, b: Any, rtol: float, atol: float) -> bool:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    return bool(x.shape == y.shape and np.all(np.isfinite(x) == np.isfinite(y))
                and np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def max_rel(a: Any, b: Any) -> str:
    """``max |a - b|`` and its size relative to ``max |b|``, for messages."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    d = float(np.max(np.abs(x - y))) if x.size else 0.0
    s = float(np.max(np.abs(y))) if y.size else 0.0
    return f"max |diff| {d:.3g} (max |value| {s:.3g})"


# ---------------------------------------------------------------------------- data
def float32_exact(X: np.ndarray) -> np.ndarray:
    """``X`` rounded to float32 values, as float64: the same numbers in every layout."""
    return np.asarray(np.asarray(X, dtype=np.float32), dtype=np.float64)


def sparsify(X: np.ndarray, rng: np.random.Generator, density: float = 0.6) -> np.ndarray:
    """``X`` with about ``1 - density`` of its entries set to zero (each row keeps one)."""
    keep = rng.random(X.shape) < density
    keep[np.arange(X.shape[0]), rng.integers(0, X.shape[1], X.shape[0])] = True
    return np.where(keep, X, 0.0)


def layouts(X: np.ndarray) -> dict[str, Any]:
    """The storage layouts a kernel accepts, of the same values: dense float64 and float32,
    CSR float64 with int32 and int64 indices, CSR float32."""
    csr = sp.csr_matrix(X)
    csr64 = sp.csr_matrix((csr.data, csr.indices.astype(np.int64),
                           csr.indptr.astype(np.int64)), shape=csr.shape)
    csr64.indices = csr64.indices.astype(np.int64)      # scipy may have downcast them
    csr64.indptr = csr64.indptr.astype(np.int64)
    return {"dense float64": np.ascontiguousarray(X),
            "dense float32": np.ascontiguousarray(X, dtype=np.float32),
            "CSR float64 int32": sp.csr_matrix(csr, dtype=np.float64),
            "CSR float64 int64": csr64,
            "CSR float32 int32": sp.csr_matrix(csr, dtype=np.float32)}


def problem_of(objective: Objective, data: Any) -> Problem:
    """The :class:`Problem` a solver builds for ``objective`` on the prepared ``data``."""
    n_blocks, dim = objective.param_layout(data)
    return Problem(n_samples=data.n_samples, n_features=data.n_features, dim=dim,
                   n_blocks=n_blocks, n_params=n_blocks * dim,
                   lam=float(getattr(objective, "lam", 0.0)), fit_intercept=data.fit_intercept,
                   capabilities=objective.capabilities,
                   curvature_bound=objective.curvature_bound,
                   start_curvature=objective.start_curvature)


@dataclass
class Setup:
    """What a kernel is built for: the problem, and the data and objective kernel of the solve
    (for kernels that bind to the objective or take it as an argument)."""

    problem: Problem
    data: Any
    objective: Any
    X: Any
    y: Any

    def refs(self) -> dict[int, Any]:
        """A ``copy.deepcopy`` memo that keeps the solve's objective and data shared (as a
        checkpoint keeps them out of a kernel's copy)."""
        d = self.data
        objs = (self.objective, d, d.X, d.y, d.sample_weight, d.grad_weight, d.rows)
        return {id(o): o for o in objs}


# ---------------------------------------------------------------------------- the suite
class Suite:
    """The conformance checks of one component (subclasses: one per kind)."""

    kind: ClassVar[Kind]
    #: The Solver keyword of the kind's slot (``None``: the objective, the first argument).
    slot: ClassVar[str | None] = None

    def __init__(self, component: Component, *, objective: Objective | None = None,
                 data: tuple[Any, Any] | None = None, n_features: int = 6,
                 random_state: int = 0, strict_state: bool = False) -> None:
        self.component: Any = component    # third-party objects: checked at run time
        self.n = int(n_features)
        self.seed = int(random_state)
        self.strict_state = bool(strict_state)
        self._objective = objective
        self._data = data
        self._setups: dict[Any, Setup] = {}

    # ------------------------------------------------------------------ what checks share
    def objective(self) -> Objective:
        """The objective the kernels are built for: the one given, else the first registered
        objective that provides every capability the component ``requires`` (``logloss``
        first)."""
        if self._objective is not None:
            return self._objective
        from sqnopt.registry import get_registry

        reg = get_registry()
        names = reg.names("objective")
        names.sort(key=lambda s: (s != "logloss", s))
        requires = frozenset(getattr(self.component, "requires", frozenset()))
        for name in names:
            try:
                obj = reg.create("objective", name)
            except Exception:
                continue
            if isinstance(obj, Objective) and requires <= obj.capabilities:
                self._objective = obj
                return obj
        fail(f"no registered objective provides {sorted(requires)}; pass objective=")

    def raw_data(self, n_samples: int = 120, n_features: int | None = None
                 ) -> tuple[Any, Any]:
        """Small data for the objective: the given ``data=``, else the overlapping boxes
        (binary) or three Gaussian blobs (multiclass)."""
        if self._data is not None and n_features is None and n_samples == 120:
            return self._data
        p = self.n if n_features is None else n_features
        obj = self.objective()
        if obj.label_kind == "binary":
            from sqnopt.datasets import make_boxes

            return make_boxes(n_samples, p, random_state=self.seed)
        rng = np.random.default_rng(self.seed)
        y = np.arange(n_samples) % 3
        centers = rng.normal(size=(3, p))
        return centers[y] + rng.normal(size=(n_samples, p)), y

    def setup(self, *, fit_intercept: bool = False, big: bool = False) -> Setup:
        """The problem, data and objective kernel the kernels are built for (cached); ``big``:
        the larger problem the memory declaration is measured on."""
        key = (fit_intercept, big)
        if key not in self._setups:
            from sqnopt.data import prepare

            obj = self.objective()
            if big:
                blocks = obj.n_blocks(3 if obj.label_kind == "multiclass" else 2)
                X, y = self.raw_data(MEMORY_SAMPLES, max(2, MEMORY_PARAMS // max(blocks, 1)))
            else:
                X, y = self.raw_data()
            data = prepare(X, y, label_kind=obj.label_kind, fit_intercept=fit_intercept)
            self._setups[key] = Setup(problem_of(obj, data), data, obj.init(data), X, y)
        return self._setups[key]

    def label(self) -> str:
        try:
            return str(self.component.describe())
        except Exception:
            return type(self.component).__name__

    # ------------------------------------------------------------------ kind hooks
    def fresh(self, setup: Setup) -> Any:
        """A new kernel for ``setup``, prepared as the solver prepares one (``init``, then
        ``bind`` to the objective kernel where the kernel has it)."""
        kernel = self.component.init(setup.problem)
        if isinstance(kernel, BindingKernelLike):
            kernel.bind(setup.objective)
        return kernel

    def drive(self, kernel: Any, setup: Setup, steps: range) -> Outputs:
        """Run ``kernel`` through the steps ``steps`` as the driver would, with inputs that
        depend only on the step number; return what it output."""
        raise NotImplementedError

    def declared_flags(self, kernel: Any) -> list[tuple[str, Any, Any]]:
        """``(flag, the component's declaration, the kernel's)`` pairs that must agree."""
        return []

    def protocol(self) -> type:
        raise NotImplementedError

    def compiled_base(self) -> type[Any]:
        raise NotImplementedError

    def kind_checks(self) -> list[tuple[str, Check]]:
        return []

    # ------------------------------------------------------------------ the list
    def checks(self) -> list[tuple[str, Check]]:
        out: list[tuple[str, Check]] = [
            ("check_component_contract", self.check_component_contract),
            ("check_registry_round_trip", self.check_registry_round_trip),
            ("check_kernel_contract", self.check_kernel_contract),
            ("check_declared_flags", self.check_declared_flags),
        ]
        out += self.kind_checks()
        out.append(("check_state_round_trip", self.check_state_round_trip))
        if callable(getattr(self.component, "memory_bytes", None)):
            out.append(("check_memory_declaration", self.check_memory_declaration))
        if self.kind != "objective" and frozenset(getattr(self.component, "requires", ())):
            out.append(("check_requires_enforced", self.check_requires_enforced))
        out.append(("check_solver_paths", self.check_solver_paths))
        return out

    # ------------------------------------------------------------------ generic checks
    def check_component_contract(self) -> str | None:
        """A frozen, comparable, picklable, describable configuration of the kind it says."""
        m = self.component
        kind = component_kind(m)
        if getattr(m, "kind", None) != kind:
            fail(f"implements the {kind} interface but its kind is {getattr(m, 'kind', None)!r}")
        if not isinstance(getattr(m, "name", None), str):
            fail(f"name must be a str class attribute, got {getattr(m, 'name', None)!r}")
        requires = getattr(m, "requires", None)
        if not (isinstance(requires, frozenset) and all(isinstance(c, str) for c in requires)):
            fail(f"requires must be a frozenset of capability strings, got {requires!r}")
        params = m.params()
        if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
            fail(f"params() must return a dict of settings by name, got {params!r:.80}")
        text = m.describe()
        if not isinstance(text, str) or not text:
            fail(f"describe() must return a non-empty str, got {text!r}")
        fields = [f.name for f in dataclasses.fields(m)] if dataclasses.is_dataclass(m) else []
        probe = fields[0] if fields else (next(iter(params)) if params else None)
        if probe is not None:
            try:
                setattr(m, probe, getattr(m, probe))
            except (dataclasses.FrozenInstanceError, AttributeError):
                pass
            else:
                fail(f"its setting {probe!r} can be assigned: components must be immutable "
                     "(use @dataclass(frozen=True))")
        twin = copy.deepcopy(m)
        if not twin == m:
            fail("a copy (copy.deepcopy) does not compare equal to the component: components "
                 "are compared by their settings (a dataclass's __eq__)")
        if type(m).__hash__ is not None and hash(twin) != hash(m):
            fail("two equal components have different hashes")
        try:
            clone = pickle.loads(pickle.dumps(m))
        except Exception as exc:
            fail(f"does not pickle: {type(exc).__name__}: {exc}")
        if type(clone) is not type(m) or not clone == m or clone.describe() != text:
            fail("a pickle round trip must give an equal component with the same describe()")
        return None

    def check_registry_round_trip(self) -> str | None:
        """``registry.create(kind, name, **params())`` rebuilds the component, as the command
        line, the estimators' ``get_params`` and checkpoints' identities rely on."""
        from sqnopt.registry import UnknownComponentError, get_registry

        m = self.component
        name = getattr(m, "name", "")
        reg = get_registry()
        try:
            entry = reg.get(self.kind, name) if name else None
        except UnknownComponentError:
            entry = None
        if entry is None:
            return f"not registered (no {self.kind} named {name!r}): round trip not run"
        if entry.factory is not type(m):
            return (f"the {self.kind} name {name!r} is registered to "
                    f"{getattr(entry.factory, '__qualname__', entry.factory)!r}, not to "
                    f"{type(m).__qualname__}: round trip not run")
        try:
            again = reg.create(self.kind, name, **m.params())
        except Exception as exc:
            fail(f"registry.create({self.kind!r}, {name!r}, **params()) raised "
                 f"{type(exc).__name__}: {exc}")
        if not again == m or again.describe() != m.describe():
            fail(f"registry.create({self.kind!r}, {name!r}, **params()) built "
                 f"{again.describe()}, not an equal component")
        return None

    def check_kernel_contract(self) -> str | None:
        """``init`` builds a kernel that implements the kind's kernel protocol: a subclass of
        the compiled base (run in the compiled loop) or a Python object with the protocol's
        methods (run in the Python loop); a kernel declaring ``compiled`` subclasses the
        compiled base (the solver chooses the loop by that declaration)."""
        setup = self.setup()
        kernel = self.fresh(setup)
        compiled = kernel_compiled(kernel)
        if compiled and not isinstance(kernel, self.compiled_base()):
            fail(f"init() returned {type(kernel).__name__}, which declares compiled but does "
                 f"not subclass {self.compiled_base().__name__}: the compiled loop cannot run "
                 "it (a kernel written in Python declares compiled = False, or nothing)")
        if not compiled and not isinstance(kernel, self.protocol()):
            fail(f"init() returned {type(kernel).__name__}, which neither subclasses "
                 f"{self.compiled_base().__name__} nor implements "
                 f"sqnopt.interfaces.{self.protocol().__name__}")
        self.kernel_contract(kernel, setup)
        return "compiled kernel" if compiled else "Python kernel (runs in the Python loop)"

    def kernel_contract(self, kernel: Any, setup: Setup) -> None:
        """Kind-specific parts of :meth:`check_kernel_contract`."""

    def check_declared_flags(self) -> str | None:
        """What the component declares agrees with what its kernel declares: the recipes read
        the component before any kernel exists, the driver reads the kernel. Besides the kind's
        flags, every bool class attribute of the component that the kernel also has must
        agree."""
        kernel = self.fresh(self.setup())
        pairs = list(self.declared_flags(kernel))
        named = {p[0] for p in pairs}
        for attr in sorted(dir(type(self.component))):
            if attr.startswith("_") or attr in named:
                continue
            value = getattr(type(self.component), attr, None)
            if isinstance(value, bool) and hasattr(kernel, attr):
                pairs.append((attr, value, getattr(kernel, attr)))
        for flag, declared, actual in pairs:
            if isinstance(declared, bool) or isinstance(actual, bool):
                if bool(declared) != bool(actual):
                    fail(f"the component declares {flag}={declared!r}, its kernel "
                         f"({type(kernel).__name__}) {flag}={actual!r}")
            elif declared != actual:
                fail(f"the component declares {flag}={declared!r}, its kernel "
                     f"({type(kernel).__name__}) {flag}={actual!r}")
        if not pairs:
            return "no flags to compare"
        return ", ".join(f"{flag}={actual!r}" for flag, _, actual in pairs)

    def check_state_round_trip(self) -> str | None:
        """The kernel's state survives a checkpoint exactly.

        Rule: kernel A is driven ``WARM_STEPS`` steps, its ``get_state()`` is written to a
        checkpoint file and read back, and a fresh kernel B (built and bound as the solver
        builds one) takes it with ``set_state``; then A and B are driven through the same
        ``PROBE_STEPS`` steps and must output the same bits, and their ``get_state()`` must
        agree. A kernel whose behaviour after the warm-up differs from a fresh kernel's has
        state; one that has state but does not carry it across the round trip *silently drops
        state*. A kernel without ``get_state``/``set_state`` has *no declared state*: a
        checkpoint keeps a copy of it (exact in memory and through pickle, refused by a
        checkpoint file), so the copy must pickle and continue exactly; with
        ``strict_state=True`` a kernel that has state but declares none fails.
        """
        setup = self.setup()
        warm = range(WARM_STEPS)
        probe = range(WARM_STEPS, WARM_STEPS + PROBE_STEPS)
        a = self.fresh(setup)
        get = getattr(a, "get_state", None)
        put = getattr(a, "set_state", None)
        if callable(get) != callable(put):
            fail(f"the kernel ({type(a).__name__}) has "
                 f"{'get_state' if callable(get) else 'set_state'} without "
                 f"{'set_state' if callable(get) else 'get_state'}: declare both or neither")
        self.drive(a, setup, warm)
        c = self.fresh(setup)
        if not callable(get):
            b = copy.deepcopy(a, setup.refs())
            # a checkpoint's copy holds placeholders for the solve's objective and data, and
            # pickles with an estimator or a checkpoint
            detached = copy.deepcopy(a, {key: None for key in setup.refs()})
            try:
                pickle.dumps(detached)
            except Exception as exc:
                fail(f"no declared state, and a copy of the kernel (what a checkpoint keeps) "
                     f"does not pickle: {type(exc).__name__}: {exc}")
            out_a = self.drive(a, setup, probe)
            diff = output_difference(out_a, self.drive(b, setup, probe))
            if diff is not None:
                fail(f"no declared state, and a copy of the kernel (what a checkpoint keeps) "
                     f"does not continue as the kernel does: {diff}")
            stateful = output_difference(out_a, self.drive(c, setup, probe))
            if stateful is None:
                return "no declared state (none observed: a used kernel behaves as a fresh one)"
            msg = ("no declared state: the kernel keeps state (after "
                   f"{WARM_STEPS} steps it behaves unlike a fresh kernel: {stateful}) but has "
                   "no get_state/set_state; a checkpoint keeps a copy of it, exact in memory "
                   "and through pickle, refused by a checkpoint file")
            if self.strict_state:
                fail(msg)
            return msg
        saved = get()
        if not isinstance(saved, dict):
            fail(f"get_state() returned a {type(saved).__name__}, not a dict")
        grown = first_difference(c.get_state(), saved, "state")
        kept = copy_tree(saved)
        try:
            restored = through_file(saved)
        except Exception as exc:
            fail(f"get_state() does not fit a checkpoint file: {type(exc).__name__}: {exc}")
        b = self.fresh(setup)
        b.set_state(restored)
        kept_restored = copy_tree(restored)
        out_a = self.drive(a, setup, probe)
        out_b = self.drive(b, setup, probe)
        diff = first_difference(kept, saved, "state")
        if diff is not None:
            fail(f"get_state() returned the kernel's own buffers, not copies: the saved state "
                 f"changed as the kernel ran on ({diff})")
        diff = first_difference(kept_restored, restored, "state")
        if diff is not None:
            fail(f"set_state() kept the checkpoint's arrays and wrote into them ({diff})")
        stateful = output_difference(out_a, self.drive(c, setup, probe))
        diff = output_difference(out_a, out_b)
        if diff is not None:
            lead = ("silently drops state: " if stateful is not None else
                    "the round trip changes the kernel's behaviour: ")
            fail(f"{lead}after {WARM_STEPS} steps, get_state() -> checkpoint file -> "
                 f"set_state() on a fresh kernel, the two kernels differ at {diff}")
        diff = first_difference(a.get_state(), b.get_state(), "state")
        if diff is not None:
            fail(f"after the round trip and {PROBE_STEPS} more steps the kernels' get_state() "
                 f"differ at {diff}")
        keys = ", ".join(sorted(saved)) or "(empty)"
        if stateful is not None:
            return (f"declared state {{{keys}}} round-trips exactly over {PROBE_STEPS} steps "
                    "(the kernel's behaviour depends on it)")
        if grown is not None:
            return (f"declared state {{{keys}}} round-trips exactly (it changes as the kernel "
                    "runs; the probe's outputs do not depend on it)")
        return f"declared state {{{keys}}}; none observed (a used kernel is a fresh one)"

    def check_memory_declaration(self) -> str | None:
        """``memory_bytes(problem)`` is a finite integer >= 0 of the order of what the kernel
        holds.

        Rule: on a problem of about ``MEMORY_PARAMS`` parameters and ``MEMORY_SAMPLES``
        samples, the bytes the kernel still holds after ``init``, ``bind`` and a short warm-up
        are measured with :mod:`tracemalloc` (which sees NumPy's buffers and Python objects,
        not raw ``malloc``), after the same steps were run once on a throwaway kernel (lazy
        imports and caches are not the kernel's). The declaration fails below
        ``held / MEMORY_FACTOR - MEMORY_SLACK`` (the solver's memory check would let a kernel
        that does not fit through) and above ``MEMORY_FACTOR_ABOVE * max(held, MEMORY_FLOOR)``
        (it would refuse problems that fit).
        """
        setup = self.setup(big=True)
        declared = self.component.memory_bytes(setup.problem)
        if isinstance(declared, bool) or not isinstance(declared, (int, np.integer)):
            if not (isinstance(declared, (float, np.floating)) and math.isfinite(declared)
                    and float(declared).is_integer()):
                fail(f"memory_bytes() returned {declared!r} ({type(declared).__name__}), not an "
                     "integer number of bytes")
        if not declared >= 0:
            fail(f"memory_bytes() returned {declared!r}: a negative number of bytes")
        throwaway = self.fresh(setup)
        self.drive(throwaway, setup, range(2))
        del throwaway
        started = not tracemalloc.is_tracing()
        collecting = gc.isenabled()
        gc.disable()       # every object made below stays in generation 0 until collected
        if started:
            tracemalloc.start()
        try:
            gc.collect(0)
            before = tracemalloc.get_traced_memory()[0]
            kernel = self.fresh(setup)
            self.drive(kernel, setup, range(2))
            gc.collect(0)  # cyclic garbage of the steps
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            if started:
                tracemalloc.stop()
            if collecting:
                gc.enable()
        del kernel
        p = setup.problem
        where = f"n_params={p.n_params}, n_samples={p.n_samples}"
        if declared < held / MEMORY_FACTOR - MEMORY_SLACK:
            fail(f"memory_bytes() declares {int(declared):,} bytes for {where}, but the kernel "
                 f"holds {held:,} bytes after init and two steps (tracemalloc): the solver's "
                 "memory check relies on the declaration")
        if declared > MEMORY_FACTOR_ABOVE * max(held, MEMORY_FLOOR):
            fail(f"memory_bytes() declares {float(declared):.4g} bytes for {where}, but the "
                 f"kernel holds {held:,} bytes after init and two steps (tracemalloc): a "
                 "declaration that large refuses problems that fit")
        return f"declares {int(declared):,} bytes for {where}; the kernel holds {held:,}"

    def check_requires_enforced(self) -> str | None:
        """A Solver refuses an objective that lacks a capability the component ``requires``."""
        from sqnopt.registry import get_registry
        from sqnopt.solver import IncompatibleComponentsError, Solver

        requires = frozenset(self.component.requires)
        reg = get_registry()
        for name in reg.names("objective"):
            try:
                obj = reg.create("objective", name)
            except Exception:
                continue
            if isinstance(obj, Objective) and not requires <= obj.capabilities:
                assert self.slot is not None
                try:
                    Solver(objective=obj, **{self.slot: self.component})
                except IncompatibleComponentsError:
                    return None
                fail(f"Solver accepted objective {obj.describe()} although the component "
                     f"requires {sorted(requires)}")
        return f"every registered objective provides {sorted(requires)}: nothing to refuse"


    def solver_components(self) -> dict[str, Any]:
        """The components of the short solve of :meth:`check_solver_paths`: this one in its
        slot; identity directions, batches of 10 and a constant step 0.05 around it (a full
        batch for a line search, a curvature model of a scale the step rule accepts)."""
        from sqnopt.registry import get_registry
        from sqnopt.schedules import Fixed, Full
        from sqnopt.steps import Constant

        comps: dict[str, Any] = {"objective": self.objective(), "curvature": "identity",
                                 "schedule": Fixed(10), "step": Constant(0.05)}
        if self.slot is not None:
            comps[self.slot] = self.component
        step = comps["step"]
        if not isinstance(step, str) and step.line_search:
            comps["schedule"] = Full()
        if not isinstance(step, str):
            reg = get_registry()
            caps = comps["objective"].capabilities
            names = sorted(reg.names("curvature"), key=lambda s: (s != "identity", s))
            for name in names:
                model = reg.create("curvature", name)
                if (isinstance(model, CurvatureModel) and model.requires <= caps
                        and model.direction_scale in step.direction_scales):
                    comps["curvature"] = model
                    break
        return comps

    def check_solver_paths(self) -> str | None:
        """A short solve with the component runs through the Python loop with finite iterates
        and, when every kernel is compiled, through the compiled loop with the same iterates
        and counters, bit for bit (the compiled loop calls the kernels' ``cy_`` methods, the
        Python loop their Python entries: they must agree)."""
        import warnings

        from sqnopt.solver import Solver

        comps = self.solver_components()
        X, y = self.raw_data()
        n_iter = 12

        def run(path: str) -> tuple[list[np.ndarray], Any]:
            trace: dict[int, np.ndarray] = {}

            def record(info: Any) -> None:
                trace.setdefault(info.iteration, info.w.copy())

            solver = Solver(**comps, sampling="shuffle", max_iter=n_iter, report_every=1,
                            random_state=self.seed, path=path,  # type: ignore[arg-type]
                            monitor=None, callback=record)
            with warnings.catch_warnings():   # the composition's warnings, not the component's
                warnings.simplefilter("ignore")
                result = solver.fit(X, y)
            return [trace[t] for t in sorted(trace)], result

        trace_py, res_py = run("python")
        if not trace_py or not all(np.all(np.isfinite(w)) for w in trace_py):
            fail(f"a short solve in the Python loop gave no finite iterates (status "
                 f"{res_py.status!r})")
        state = Solver(**comps).init_state(X, y)
        if not state.compiled:
            return "Python loop (not every kernel is compiled)"
        trace_c, res_c = run("compiled")
        if not res_c.compiled:
            fail("path='compiled' did not run compiled")
        if len(trace_c) != len(trace_py):
            fail(f"the compiled loop made {len(trace_c)} iterations, the Python loop "
                 f"{len(trace_py)} (statuses {res_c.status!r}, {res_py.status!r})")
        for t, (a, b) in enumerate(zip(trace_py, trace_c)):
            d = first_difference(a, b, f"iteration {t + 1}")
            if d is not None:
                fail(f"the compiled and Python loops differ: {d}")
        for key in ("n_iter", "n_samples", "n_grad_evals", "n_pairs_accepted",
                    "n_pairs_skipped", "n_resets"):
            if getattr(res_c, key, None) != getattr(res_py, key, None):
                fail(f"the compiled and Python loops count {key} {getattr(res_c, key, None)} and "
                     f"{getattr(res_py, key, None)}")
        return f"compiled and Python loops agree over {len(trace_c)} iterations"


def named(checks: Sequence[tuple[str, Check]], label: str) -> list[tuple[str, Check]]:
    """The checks with ``[label]`` appended to their names and failures raised as
    :class:`ConformanceError` naming the check and the component."""

    def wrap(name: str, fn: Check) -> Check:
        def run() -> str | None:
            try:
                return fn()
            except ConformanceError:
                raise
            except AssertionError as exc:
                raise ConformanceError(name, label, str(exc)) from exc
            except Exception as exc:
                raise ConformanceError(name, label,
                                       f"raised {type(exc).__name__}: {exc}") from exc
        run.__name__ = name
        run.__doc__ = fn.__doc__
        return run

    return [(f"{name}[{label}]", wrap(name, fn)) for name, fn in checks]
