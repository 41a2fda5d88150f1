"""The compiled extension modules (incrowd._native._NAME, one for each src/incrowd/_native/_NAME.c,
which include _common.h); everything else is in pyproject.toml.

Portable flags only: no CPU-specific instructions (a wheel runs on every machine of its platform;
two integer loops carry an AVX2 clone the loader picks where the CPU has it, _common.h's
INTEGER_CLONES) and no floating-point contraction, so a fused multiply-add never rounds differently from the
numba kernels these replaced (numba compiles without fastmath). Python's own flags carry
-fwrapv, which keeps the compiler from vectorizing MDAV's loops as well as numba does (about 10 %
of its time): the kernels never overflow a signed integer (the keys wrap as unsigned), so they
turn it off.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

FLAGS = {"msvc": ["/O2", "/fp:precise"], "unix": ["-O3", "-fno-wrapv", "-ffp-contract=off", "-fno-fast-math"]}


class BuildExt(build_ext):
    def build_extensions(self):
        flags = FLAGS.get(self.compiler.compiler_type, FLAGS["unix"])
        for ext in self.extensions:
            ext.extra_compile_args = [*flags, *ext.extra_compile_args]
        super().build_extensions()


NATIVE = Path("src/incrowd/_native")

setup(
    ext_modules=[Extension(f"incrowd._native.{c.stem}", sources=[c.as_posix()], depends=[(NATIVE / "_common.h").as_posix()])
                 for c in sorted(NATIVE.glob("_*.c"))],
    cmdclass={"build_ext": BuildExt},
)
