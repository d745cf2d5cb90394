"""Constant Cypher templates and their loader."""

from .templates import ROW_FIXED, Query, TemplateError, load, names, render, render_type

__all__ = ["ROW_FIXED", "Query", "TemplateError", "load", "names", "render", "render_type"]
