"""Planners: question + retrieved context -> :class:`~sage.planner.base.Plan`."""

from .base import DISPLAY_HINTS, Attempt, Plan, Planner

__all__ = ["DISPLAY_HINTS", "Attempt", "Plan", "Planner"]
