"""Kubernetes objects that run berth's scheduler in a cluster, in one of two shapes.

Why this exists: a scheduler configuration decides both what the scheduler does and what it may touch, so the
deployment objects should be derived from the configuration, not written by hand beside it. Two shapes:

- ``profiles`` (the KEP-1451 shape): ONE Deployment runs every profile of the configuration in one process, with
  one cache and one queue; one ServiceAccount, one ClusterRole (the union the profiles need, see
  :mod:`berth.schedule.rbac`), one ConfigMap holding the configuration file exactly as written.
- ``separate`` (the "one scheduler binary per policy" shape): per profile, its own ServiceAccount, ClusterRole
  (only what that profile needs), ConfigMap (the configuration reduced to that one profile, with its own lease
  name so the schedulers do not fight over one lease) and Deployment.

The chart in ``charts/berth-scheduler`` renders the same objects as the ``profiles`` shape; a test keeps the two in
step, so keep them together when changing either.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.kube import canonical, yamlio
from berth.kube.errors import InputError
from berth.schedule import config as config_mod
from berth.schedule import rbac
from berth.schedule.deploy_defaults import DEFAULT_NAME as DEFAULT_NAME
from berth.schedule.deploy_defaults import DEFAULT_NAMESPACE as DEFAULT_NAMESPACE
from berth.schedule.deploy_defaults import Shape as Shape
from berth.schedule.plugins.registry import Registry

CONFIG_DIR = "/etc/berth"
CONFIG_KEY = "config.yaml"
METRICS_PORT = 10259  # kube-scheduler's secure port number; berth serves /metrics, /healthz, /readyz on it
RUN_AS = 10001  # the non-root uid/gid of the image's `berth` user (see Dockerfile)
CONFIG_HASH_ANNOTATION = "berth.dev/config-sha256"
SCHEDULER_NAMES_ANNOTATION = "berth.dev/scheduler-names"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class DeployOptions:
    """What the user chooses besides the configuration: image, namespace, shape and object name."""

    image: str
    namespace: str = DEFAULT_NAMESPACE
    shape: Shape = Shape.PROFILES
    name: str = DEFAULT_NAME
    plugins: tuple[str, ...] = ()  # --plugin MODULE:CLASS refs, passed on to `berth schedule run`
    shadow: bool = False  # run `berth schedule shadow` (read-only role, no lease) instead of `run`


@dataclass(frozen=True)
class Unit:
    """One running scheduler: its object name, configuration text and resolved configuration, and its role."""

    name: str
    config_text: str
    config: config_mod.SchedulerConfiguration
    role: rbac.RoleResult


@dataclass(frozen=True)
class Rendered:
    objects: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]

    def yaml(self) -> str:
        return yamlio.dump_all(self.objects)


def labels(instance: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": DEFAULT_NAME,
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/component": "scheduler",
        "app.kubernetes.io/part-of": "berth",
    }


def selector(instance: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": DEFAULT_NAME, "app.kubernetes.io/instance": instance}


def _check_name(value: str, where: str, what: str) -> None:
    if len(value) > 63 or not _DNS_LABEL.match(value):
        raise InputError(
            f"{value!r} cannot be used as {what}: it must be a DNS label (lowercase letters, digits and '-', "
            "at most 63 characters); rename it",
            where,
        )


def units(
    config_text: str,
    cfg: config_mod.SchedulerConfiguration,
    registry: Registry,
    options: DeployOptions,
    source: str,
) -> list[Unit]:
    """The schedulers to deploy: one for all profiles, or one per profile (``separate``)."""
    if not options.image or any(c.isspace() for c in options.image):
        raise InputError(
            f"{options.image!r} is not an image reference; pass e.g. registry.example/berth:0.1.0", "--image"
        )
    _check_name(options.name, "--name", "an object name")
    _check_name(options.namespace, "--namespace", "a namespace")
    if options.shape is Shape.PROFILES:
        return [Unit(options.name, config_text, cfg, _role(cfg, registry, options))]
    raw = yamlio.load_one(config_text, source)
    if not isinstance(raw, dict):  # config_mod.parse accepted it, so this is a mapping; guard for mypy
        raise InputError("expected a KubeSchedulerConfiguration mapping", source)
    raw_profiles = raw.get("profiles") or [{}]
    out = []
    for index, (raw_profile, profile) in enumerate(zip(raw_profiles, cfg.profiles, strict=True)):
        name = f"{options.name}-{profile.scheduler_name}"
        _check_name(name, f"{source}: profiles[{index}].schedulerName", "part of an object name")
        doc = copy.deepcopy(raw)
        doc["profiles"] = [copy.deepcopy(raw_profile)]
        leader = cfg.leader_election
        if leader.leader_elect:
            # Each scheduler binary leads on its own: one lease per profile, named after its scheduler.
            doc["leaderElection"] = {
                **(raw.get("leaderElection") or {}),
                "resourceName": profile.scheduler_name,
            }
            leader = dataclasses.replace(leader, resource_name=profile.scheduler_name)
        text = yamlio.dump(doc)
        one = dataclasses.replace(cfg, profiles=(profile,), leader_election=leader)
        # The reduced document must itself be a valid configuration (it is what the pod will load).
        config_mod.parse(doc, f"{source} (profile {profile.scheduler_name})", registry)
        out.append(Unit(name, text, one, _role(one, registry, options)))
    return out


def _role(
    cfg: config_mod.SchedulerConfiguration, registry: Registry, options: DeployOptions
) -> rbac.RoleResult:
    """What the scheduler needs; a shadow only reads (``RoleResult.read_only``)."""
    role = rbac.compute(cfg, registry)
    return role.read_only() if options.shadow else role


def service_account(unit: Unit, options: DeployOptions) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": unit.name, "namespace": options.namespace, "labels": labels(unit.name)},
    }


def cluster_role(unit: Unit) -> dict[str, Any]:
    return unit.role.cluster_role(unit.name, labels(unit.name))


def cluster_role_binding(unit: Unit, options: DeployOptions) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": unit.name, "labels": labels(unit.name)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": unit.name},
        "subjects": [{"kind": "ServiceAccount", "name": unit.name, "namespace": options.namespace}],
    }


def config_map(unit: Unit, options: DeployOptions) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": unit.name, "namespace": options.namespace, "labels": labels(unit.name)},
        "data": {CONFIG_KEY: unit.config_text},
    }


def run_args(unit: Unit, options: DeployOptions) -> list[str]:
    """The ``berth`` arguments of the container (the image's entrypoint is ``berth``)."""
    command = "shadow" if options.shadow else "run"
    args = ["schedule", command, "--config", f"{CONFIG_DIR}/{CONFIG_KEY}"]
    if unit.config.leader_election.leader_elect and not options.shadow:
        args.append("--leader-elect")
    args += ["--metrics-port", str(METRICS_PORT)]
    for ref in options.plugins:
        args += ["--plugin", ref]
    return args


def deployment(unit: Unit, options: DeployOptions) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": 1}
    if not unit.config.leader_election.leader_elect or options.shadow:
        # Without a lease, a rolling update would briefly run two schedulers binding the same pods.
        spec["strategy"] = {"type": "Recreate"}
    spec["selector"] = {"matchLabels": selector(unit.name)}
    spec["template"] = {
        "metadata": {
            "labels": labels(unit.name),
            "annotations": {CONFIG_HASH_ANNOTATION: canonical.sha256_text(unit.config_text)},
        },
        "spec": {
            "serviceAccountName": unit.name,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": RUN_AS,
                "runAsGroup": RUN_AS,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "scheduler",
                    "image": options.image,
                    "imagePullPolicy": "IfNotPresent",
                    "args": run_args(unit, options),
                    "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": "metrics"},
                        "initialDelaySeconds": 5,
                        "periodSeconds": 10,
                    },
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": "metrics"}, "periodSeconds": 5},
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "readOnlyRootFilesystem": True,
                        "capabilities": {"drop": ["ALL"]},
                    },
                    "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True}],
                }
            ],
            "volumes": [{"name": "config", "configMap": {"name": unit.name}}],
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": unit.name,
            "namespace": options.namespace,
            "labels": labels(unit.name),
            "annotations": {SCHEDULER_NAMES_ANNOTATION: ",".join(unit.config.scheduler_names)},
        },
        "spec": spec,
    }


def lease_notes(cfg: config_mod.SchedulerConfiguration, options: DeployOptions) -> list[str]:
    """Remarks about the lease: kube-scheduler's own name (berth would wait forever), and a lease namespace other
    than the scheduler's (it must exist, or acquiring the lease fails with 404 and nothing is scheduled)."""
    leader = cfg.leader_election
    if not leader.leader_elect or options.shadow:  # a shadow takes no lease
        return []
    notes: list[str] = []
    if options.shape is Shape.PROFILES and leader.resource_name == "kube-scheduler":
        notes.append(
            f"leaderElection uses the lease {leader.resource_namespace}/kube-scheduler, which the cluster's own "
            "kube-scheduler holds: berth would wait forever as a standby. Set leaderElection.resourceName "
            "(e.g. berth-scheduler) in the configuration"
        )
    if leader.resource_namespace != options.namespace:
        notes.append(
            f"leaderElection.resourceNamespace is {leader.resource_namespace}, the scheduler runs in "
            f"{options.namespace}: the lease's namespace must exist (or set resourceNamespace: {options.namespace})"
        )
    return notes


def render(
    config_text: str,
    cfg: config_mod.SchedulerConfiguration,
    registry: Registry,
    options: DeployOptions,
    source: str = "<config>",
) -> Rendered:
    """All objects, grouped by kind in apply order (ServiceAccounts, ClusterRoles, bindings, ConfigMaps, Deployments)."""
    us = units(config_text, cfg, registry, options, source)
    objects: list[dict[str, Any]] = []
    objects += [service_account(u, options) for u in us]
    objects += [cluster_role(u) for u in us]
    objects += [cluster_role_binding(u, options) for u in us]
    objects += [config_map(u, options) for u in us]
    objects += [deployment(u, options) for u in us]
    notes: dict[str, None] = dict.fromkeys(lease_notes(cfg, options))
    for u in us:
        notes.update(dict.fromkeys(u.role.notes))
    return Rendered(tuple(objects), tuple(notes))


def helm_values(unit_role: rbac.RoleResult) -> Mapping[str, Any]:
    """The chart values that carry a computed role (``berth schedule rbac -o values``)."""
    return {"rbac": {"why": unit_role.why_text(), "rules": [r.to_dict() for r in unit_role.rules]}}
