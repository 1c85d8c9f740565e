"""The floor every part of berth stands on: pure Kubernetes data helpers plus the one client wrapper.

Modules here do no scheduling, installing or serving. Import modules, not names
(``from berth.kube import quantity`` then ``quantity.parse(...)``), so call sites show the layer they use.
"""
