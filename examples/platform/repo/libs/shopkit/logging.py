"""Structured logging set-up shared by every service."""

import logging
import sys


def configure(service: str, level: str = "INFO") -> logging.Logger:
    """Log one JSON-ish line per record, tagged with the service name."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(
        logging.Formatter(
            f'{{"service": "{service}", "level": "%(levelname)s", "msg": "%(message)s"}}'
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    return logging.getLogger(service)
