"""Which variant of the vector kernels of ``sqnopt/_simd.h`` this process runs."""

VARIANTS: tuple[str, str, str]

def simd_variant() -> str: ...
