"""The optional C accelerator of doikit.DOI; everything else is in pyproject.toml.

``optional=True``: where no C compiler is at hand, the build says so and installs the
pure-Python package, which behaves the same (doikit._doi.DOIState is the reference).
Built for CPython only: on PyPy a C extension runs through an emulation layer and would be
slower than the Python code PyPy compiles itself.
"""

import platform

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("doikit._speedups", sources=["src/doikit/_speedups.c"], optional=True),
    ]
    if platform.python_implementation() == "CPython"
    else [],
)
