"""The optional C accelerator of doikit.DOI; everything else is in pyproject.toml.

``optional=True``: where no C compiler is at hand, the build says so and installs the
pure-Python package, which behaves the same (doikit._doi.DOIState is the reference).
Built for CPython only: on PyPy a C extension runs through an emulation layer and would be
slower than the Python code PyPy compiles itself.

One extension, doikit._speedups, from the translation units in src/doikit/_c/: the pure-C
reader (lib/) and one file per job on the Python side (python/); docs/design.md has the
layout.
"""

import platform

from setuptools import Extension, setup

C = "src/doikit/_c"
JOBS = (
    "module",
    "state",
    "scan",
    "rules",
    "url",
    "quick",
    "walk",
    "make",
    "bulk",
    "helper",
    "arrow",
    "answer",
)
SOURCES = [f"{C}/lib/reader.c", *(f"{C}/python/{job}.c" for job in JOBS)]
HEADERS = [f"{C}/lib/reader.h", *(f"{C}/python/{h}.h" for h in ("speedups", "helper", "extract"))]

setup(
    ext_modules=[
        Extension(
            "doikit._speedups",
            sources=SOURCES,
            include_dirs=[f"{C}/lib", f"{C}/python"],
            depends=HEADERS,
            optional=True,
        ),
    ]
    if platform.python_implementation() == "CPython"
    else [],
)
