"""Planners: question + retrieved context -> :class:`~sage.planner.base.Plan`."""

from .base import Attempt, Plan, Planner

__all__ = ["Attempt", "Plan", "Planner"]
