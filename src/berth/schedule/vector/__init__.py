"""The vectorised scheduling path: numpy columns over nodes and the kernels the built-in plugins run on them.

Why: the per-node plugin methods are the readable reference (the oracle), but calling them for hundreds of nodes
per pod in Python is what limits throughput. Here each node is a row of :class:`~berth.schedule.framework.columns.
NodeArrays` (allocatable, requested, non-zero requested, pod counts, taint signatures, ...), refreshed one row at a
time when the snapshot shows a node changed (an assumed or forgotten pod clones that node), and the built-in
plugins' ``filter_nodes``/``score_nodes`` hooks answer for all nodes with a handful of array operations.

Where things live: the node columns are the framework's (:mod:`berth.schedule.framework.columns`: the framework's
fused scan runs over them, so they sit below it with :class:`~berth.schedule.framework.types.NodeInfo`); this
package holds what the plugins compute on them -- :mod:`.kernels` and :mod:`.topology` -- and re-exports the
columns' names plugins use (:class:`NodeArrays`, :func:`arrays_for`, :func:`enabled` ...). It imports the framework;
the framework never imports it.

Rules the kernels keep, so both paths agree exactly:

- integer arithmetic on int64 arrays with Go's truncating division where upstream uses ints; float64 only where
  upstream uses float64 (BalancedAllocation), with the same operations in the same order;
- a rejected node's :class:`~berth.schedule.framework.interface.Status` comes from the plugin's own per-node
  ``filter`` (the mask only decides *which* nodes fail), so reasons and codes are the reference's;
- values outside what int64/float64 can hold exactly (beyond 2**52, negative amounts) send that node -- or the
  whole pod -- down the per-node path.

The fused path (what the scheduler runs by default): :meth:`NodeArrays.sync` follows the snapshot's change log
so position ``i`` of the node list is row ``i`` (a rotating filter chunk is a slice: a view, no copy); per chunk
the framework ANDs every Filter plugin's ``filter_mask`` and asks the per-node Filter chain only about the nodes a
mask failed; Score plugins answer with ``score_array``/``normalize_array`` and the framework range-checks and
weights them all in one stacked array. Kernel results that depend only on a node and the pod's requests are memo
columns (:meth:`NodeArrays.memo_column`): computed once for all rows, then only for rows refreshed since, so a pod
shaped like the previous one costs a lookup per plugin.

Switch: a framework (the plugins' handle) with ``vectorised = False`` (a declared ``Handle`` member) runs the
reference path; :func:`enabled` reads it. The benchmark's ``--verify`` uses that to compare both paths.
"""

from __future__ import annotations

from berth.schedule.framework.columns import LIMIT, NodeArrays, Rows, arrays_for, enabled, set_enabled

__all__ = ["LIMIT", "NodeArrays", "Rows", "arrays_for", "enabled", "set_enabled"]
