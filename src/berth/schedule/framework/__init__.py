"""The scheduling framework: statuses, cycle state, node/pod infos, extension-point interfaces, runtime.

``interface`` holds the contracts plugins implement; ``types`` the data they read (``PodInfo``, ``NodeInfo``);
``runtime`` runs one profile's plugins over one pod.
"""
