"""Helm hook vocabulary (helm/helm ``pkg/release/v1/hook.go``): events, delete policies, annotation keys.

Typed here once; the install part parses annotations with these and never spells the strings itself.
"""

from __future__ import annotations

from enum import StrEnum

HOOK_ANNOTATION = "helm.sh/hook"
WEIGHT_ANNOTATION = "helm.sh/hook-weight"
DELETE_POLICY_ANNOTATION = "helm.sh/hook-delete-policy"
OUTPUT_LOG_POLICY_ANNOTATION = "helm.sh/hook-output-log-policy"
RESOURCE_POLICY_ANNOTATION = "helm.sh/resource-policy"
RESOURCE_POLICY_KEEP = "keep"


class HookEvent(StrEnum):
    PRE_INSTALL = "pre-install"
    POST_INSTALL = "post-install"
    PRE_DELETE = "pre-delete"
    POST_DELETE = "post-delete"
    PRE_UPGRADE = "pre-upgrade"
    POST_UPGRADE = "post-upgrade"
    PRE_ROLLBACK = "pre-rollback"
    POST_ROLLBACK = "post-rollback"
    TEST = "test"


# `test-success` is Helm's alias for `test`; `test-failure` is *not* recognised.
HOOK_EVENT_ALIASES: dict[str, HookEvent] = {"test-success": HookEvent.TEST}


class DeletePolicy(StrEnum):
    BEFORE_HOOK_CREATION = "before-hook-creation"
    HOOK_SUCCEEDED = "hook-succeeded"
    HOOK_FAILED = "hook-failed"


def parse_event(text: str) -> HookEvent | None:
    """One comma-separated part of ``helm.sh/hook`` (trimmed, lowercased); None when Helm would not know it."""
    t = text.strip().lower()
    if t in HOOK_EVENT_ALIASES:
        return HOOK_EVENT_ALIASES[t]
    try:
        return HookEvent(t)
    except ValueError:
        return None


def parse_weight(text: str | None) -> int:
    """``helm.sh/hook-weight`` as Helm reads it (strconv.Atoi): signed base-10 int64, untrimmed; else 0."""
    if text is None:
        return 0
    s = str(text)
    body = s[1:] if s[:1] in "+-" else s
    if not body or not body.isdigit() or not body.isascii():
        return 0
    n = int(s)
    return n if -(2**63) <= n < 2**63 else 0
