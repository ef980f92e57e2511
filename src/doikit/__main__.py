"""``python -m doikit``: the command line."""

from doikit.cli import main

main()
