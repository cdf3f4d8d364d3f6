"""Type stub for the compiled module ``sqnopt.solver._sampler``."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

class Sampler:
    """Minibatch sampler over ``range(n_samples)`` fed by a NumPy bit generator."""

    def __init__(self, n_samples: int, bit_generator: np.random.BitGenerator) -> None: ...
    @property
    def n_samples(self) -> int: ...
    @property
    def n_drawn(self) -> int: ...
    @property
    def whole_at_n(self) -> bool:
        """A request of ``n_samples`` or more indices is the whole data set, in order."""
        ...
    @property
    def bit_generator(self) -> np.random.BitGenerator: ...
    def draw(self, size: int) -> NDArray[np.intp]: ...

class UniformSampler(Sampler): ...

class ShuffleSampler(Sampler):
    @property
    def n_epochs(self) -> int: ...

class SubsetSampler(Sampler): ...

class WeightedSampler(Sampler):
    def __init__(
        self, n_samples: int, bit_generator: np.random.BitGenerator, weights: ArrayLike
    ) -> None: ...

class SequenceSampler(Sampler):
    def __init__(
        self, n_samples: int, bit_generator: np.random.BitGenerator, sequence: ArrayLike
    ) -> None: ...
    @property
    def remaining(self) -> int: ...
