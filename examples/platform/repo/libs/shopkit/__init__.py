"""Helpers shared by the shop services (not a service itself)."""
