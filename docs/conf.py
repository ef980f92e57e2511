"""Sphinx configuration: Markdown pages (MyST), the API from the docstrings (autodoc), the
command line from its click definitions (sphinx-click). Built by scripts/docs.sh."""

from __future__ import annotations

project = "doikit"
author = "doikit developers"
copyright = "doikit developers"  # noqa: A001 - Sphinx's name
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx_click",
]
source_suffix = {".md": "markdown"}
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
html_theme = "furo"
html_title = "doikit"
# The docs link nowhere outside themselves (scripts/doclinks.py checks it): the footer is the
# site's own (_templates/page.html), without the theme's credit links.
templates_path = ["_templates"]
html_show_sphinx = False
