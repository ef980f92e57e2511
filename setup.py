"""The optional C accelerator of doikit.DOI; everything else is in pyproject.toml.

``optional=True``: where no C compiler is at hand, the build says so and installs the
pure-Python package, which behaves the same (doikit._doi.DOIState is the reference).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("doikit._speedups", sources=["src/doikit/_speedups.c"], optional=True),
    ],
)
