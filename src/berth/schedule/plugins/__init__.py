"""Scheduler plugins, one per module (``node_name.py``, ``node_resources_fit.py``, ``concentrate.py`` ...).

Each module declares ``SPEC: PluginSpec`` (name, class, args type, whether it is active) and nothing here lists
them except :mod:`berth.schedule.plugins.registry`.
"""
