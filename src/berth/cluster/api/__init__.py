"""The in-process Kubernetes API: the semantics behind every HTTP verb, callable without HTTP.

The HTTP server (``server.py``) parses requests and calls the methods here; the controllers call the same methods
in-process. Both therefore see one behaviour: defaulting, validation, a global ``resourceVersion`` with optimistic
concurrency (409), ``generation`` bumps, status/scale subresources, finalizers and ``deletionTimestamp``,
propagation policies, namespace lifecycle hooks, CRDs that register new types, and watches with 410 after
compaction.

Object life cycle as the store sees it::

    create --> live --(update/patch)--> live
                 |--(delete, no finalizers)--> gone (DELETED event)
                 `--(delete, finalizers)--> terminating (deletionTimestamp set, MODIFIED)
                        --(update leaves no finalizers)--> gone (DELETED)

Namespaces are the same with ``spec.finalizers`` (the namespace controller empties them through ``finalize``).
Pods are removed at once on delete (no kubelet grace period is simulated) unless they carry finalizers.

All writes run under the store's writer lock, so read-check-write sequences are atomic. Objects handed out are
fresh copies: callers may mutate them freely.

The parts, each a module (a class in a line of mixins, as upstream's generic registry store splits its verbs)::

    base.py     state (store, registry, clock, admission chain) and shared reads
    read.py     get, list (selectors, pages)             watch.py     Watch, watch
    write.py    create, update, commit, bind             patching.py  the four patch types
    delete.py   delete, deletecollection                 scale.py     the scale subresource
    strategy.py per-kind defaults, preparation, validation
    fields.py   managedFields and the patch engines' schema
    events_v1.py  events.k8s.io/v1 as a view of core Events
    core.py     Api: the parts together, bootstrap objects, in-process calls
"""

from __future__ import annotations

from berth.cluster.api.base import DEFAULT_USER, AuditHook, Clock
from berth.cluster.api.core import Api
from berth.cluster.api.patching import PATCH_TYPES
from berth.cluster.api.read import FIELD_LABELS, ListResult
from berth.cluster.api.watch import Watch
from berth.cluster.errors import ApiError
from berth.cluster.objmeta import format_micro_time, format_time, new_uid
from berth.cluster.resources import ResourceType

__all__ = [
    "DEFAULT_USER",
    "FIELD_LABELS",
    "PATCH_TYPES",
    "Api",
    "ApiError",
    "AuditHook",
    "Clock",
    "ListResult",
    "ResourceType",
    "Watch",
    "format_micro_time",
    "format_time",
    "new_uid",
]
