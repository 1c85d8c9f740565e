"""Duplicate mapping keys in YAML text, with the field path and line of each repeat.

Kubernetes' strict decoders (``sigs.k8s.io/yaml`` ``YAMLToJSONStrict``, used for component configs such as
``KubeSchedulerConfiguration``) refuse a key set twice in one mapping -- ``key "x" already set in map`` -- where
the ordinary decoder keeps the last. The one loader, :mod:`berth.kube.yamlio`, finds them in the same pass that
decodes the text (``strict=True``), with aliases bounded; this module keeps the names strict readers import.
"""

from __future__ import annotations

from berth.kube.yamlio import DuplicateKey, duplicate_keys

__all__ = ["DuplicateKey", "duplicate_keys"]
