"""Constant Cypher templates and their loader."""

from .templates import Query, TemplateError, load, names, render, render_type

__all__ = ["Query", "TemplateError", "load", "names", "render", "render_type"]
