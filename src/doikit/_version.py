"""doikit's version, in one place: ``doikit.__version__`` and the package's metadata
(pyproject.toml reads it from here) both come from this line."""

__version__ = "0.1.0"
