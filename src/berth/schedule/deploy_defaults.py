"""The defaults and choices of ``berth schedule manifests|rbac`` (names, namespace, shapes), apart from
:mod:`berth.schedule.manifests` so the command-line options can show them without importing the framework (which
``berth schedule --help`` should not pay for)."""

from __future__ import annotations

from enum import StrEnum

DEFAULT_NAME = "berth-scheduler"
DEFAULT_NAMESPACE = "berth-system"


class Shape(StrEnum):
    PROFILES = "profiles"
    SEPARATE = "separate"
