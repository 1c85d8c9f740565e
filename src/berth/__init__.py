"""berth: Helm-packaged components onto clusters correctly, and a Python kube-scheduler framework.

Three parts stand on one shared layer:

- ``berth.kube``     -- objects, quantities, selectors, YAML, kind order, kubeconfig/client, tool binaries.
- ``berth.install``  -- chart -> package -> render -> lifecycle plan -> apply | script.
- ``berth.schedule`` -- KubeSchedulerConfiguration, framework, queue, cache, plugins, simulation.
- ``berth.cluster``  -- an embedded kubectl-compatible API server.

Arrows point down only: the three parts import ``berth.kube`` and never each other's internals.
"""

__version__ = "0.1.0"
