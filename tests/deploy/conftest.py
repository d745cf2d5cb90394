"""Fixtures for the deployment tests (they and their helpers live in chart_support.py)."""

from chart_support import helm_env as helm_env
from chart_support import helm_run as helm_run
from chart_support import render as render
from chart_support import tools as tools
