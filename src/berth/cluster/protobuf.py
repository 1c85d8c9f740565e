"""Decode the protobuf request bodies real clients send, into the JSON-equivalent dicts the server works on.

Why: kubectl 1.35 sends ``kubectl create configmap|secret|namespace|serviceaccount|deployment|job|...``, ``kubectl
create token``, ``kubectl autoscale`` and ``kubectl auth can-i`` bodies as ``application/vnd.kubernetes.protobuf``;
``kubectl create job --from=cronjob/NAME`` sends the CronJob's whole job template as a Job, and ``kubectl debug
node/NODE`` and ``kubectl debug POD --copy-to=NAME`` send a whole v1 Pod. Helm 4 writes its release Secrets and
uninstall DeleteOptions that way. There is no JSON fallback, so a server that answers 415 breaks those commands.
Schedulers and controllers written in Go (client-go defaults to protobuf for built-in kinds) send Bindings, Events,
Leases and Evictions the same way. We decode a fixed set of kinds (:data:`KINDS`); every other kind gets a 415 that
says to send JSON. Everything reachable from a PodSpec is in the tables, so a pod template is never cut short.

Wire format (k8s.io/apimachinery ``runtime/serializer/protobuf``): the bytes ``k8s\\0`` then a ``runtime.Unknown``
{1 typeMeta {1 apiVersion, 2 kind}, 2 raw (the object message), 3 contentEncoding, 4 contentType}. Field numbers
below come from k8s.io/api ``generated.proto`` (core/v1, batch/v1, apps/v1, ... as of Kubernetes 1.35) and were
checked against bodies captured from kubectl 1.35.2 (the fixtures under tests/cluster/fixtures/protobuf/).

Go's generated marshallers write every non-pointer field, even when empty, so an empty string, zero or empty
message means "unset" unless the field is a pointer in Go, or its JSON tag has no ``omitempty`` so JSON shows the
zero too (``keep`` below): ``replicas: 0``, ``gracePeriodSeconds: 0``, ``emptyDir: {}`` and ``iscsi.lun: 0`` must
survive. Repeated fields keep their empty elements (``apiGroups: [""]``).

Unknown field numbers: an empty one (zero, empty bytes, or a message of nothing but empty fields, which is how Go
writes an unset non-pointer struct such as a Deployment's status on create) carries no data and is skipped. A
non-empty one would be lost silently, so it is refused with a 415 that names the message and field number and says
to send the object as JSON (``kubectl apply -f``) instead.

Pure: bytes in, dict out; :class:`berth.cluster.errors.ApiError` on failure.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from berth.cluster import errors

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


def is_protobuf(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` header names the Kubernetes protobuf encoding."""
    return (content_type or "").split(";", 1)[0].strip().lower() == CONTENT_TYPE


# --------------------------------------------------------------------------------------------------------------
# Wire reader
# --------------------------------------------------------------------------------------------------------------

VARINT, I64, LEN, I32 = 0, 1, 2, 5


class _WireError(ValueError):
    pass


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise _WireError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _WireError("varint longer than 10 bytes")


def fields(buf: bytes) -> list[tuple[int, int, int | bytes]]:
    """Split one message into (field number, wire type, value) in wire order (a tiny protobuf reader)."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _WireError("field number 0")
        value: int | bytes
        if wire == VARINT:
            value, pos = _varint(buf, pos)
        elif wire == LEN:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise _WireError("truncated length-delimited field")
            value = buf[pos : pos + length]
            pos += length
        elif wire == I64:
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == I32:
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise _WireError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


# --------------------------------------------------------------------------------------------------------------
# Message tables
# --------------------------------------------------------------------------------------------------------------


class T(Enum):
    """How a field's wire value becomes JSON."""

    STRING = "string"
    BYTES = "bytes"  # base64 text in JSON
    INT = "int"  # int32/int64 varint (two's complement for negatives)
    BOOL = "bool"
    MESSAGE = "message"
    INLINE = "inline"  # embedded struct whose fields JSON flattens into the parent
    MAP_STRING = "map<string,string>"
    MAP_BYTES = "map<string,bytes>"
    MAP_QUANTITY = "map<string,Quantity>"
    TIME = "Time"
    MICRO_TIME = "MicroTime"  # six fraction digits
    INT_OR_STRING = "IntOrString"
    QUANTITY = "Quantity"
    RAW_JSON = "raw JSON"  # FieldsV1 / RawExtension: a message whose field 1 holds JSON bytes


@dataclass(frozen=True)
class F:
    """One field: its JSON name, how to decode it, whether repeated, whether an empty value is kept.

    ``keep`` is for Go pointers (present means set, even when empty) and for non-pointer fields whose JSON tag has
    no ``omitempty`` and whose zero value means something (``iscsi.lun: 0``, ``sleep.seconds: 0``).
    """

    name: str
    type: T = T.STRING
    message: str = ""
    repeated: bool = False
    keep: bool = False


def _s(name: str, repeated: bool = False, keep: bool = False) -> F:
    return F(name, T.STRING, repeated=repeated, keep=keep)


def _i(name: str, keep: bool = False) -> F:
    return F(name, T.INT, keep=keep)


def _b(name: str, keep: bool = False) -> F:
    return F(name, T.BOOL, keep=keep)


def _m(name: str, message: str, repeated: bool = False, keep: bool = False) -> F:
    return F(name, T.MESSAGE, message, repeated, keep)


def _inline(message: str) -> F:
    return F("", T.INLINE, message)


MESSAGES: dict[str, dict[int, F]] = {
    # -- meta ------------------------------------------------------------------------------------------------
    "ObjectMeta": {
        1: _s("name"),
        2: _s("generateName"),
        3: _s("namespace"),
        4: _s("selfLink"),
        5: _s("uid"),
        6: _s("resourceVersion"),
        7: _i("generation"),
        8: F("creationTimestamp", T.TIME),
        9: F("deletionTimestamp", T.TIME),
        10: _i("deletionGracePeriodSeconds", keep=True),
        11: F("labels", T.MAP_STRING),
        12: F("annotations", T.MAP_STRING),
        13: _m("ownerReferences", "OwnerReference", repeated=True),
        14: _s("finalizers", repeated=True),
        17: _m("managedFields", "ManagedFieldsEntry", repeated=True),
    },
    "OwnerReference": {
        1: _s("kind"),
        3: _s("name"),
        4: _s("uid"),
        5: _s("apiVersion"),
        6: _b("controller", keep=True),
        7: _b("blockOwnerDeletion", keep=True),
    },
    "ManagedFieldsEntry": {
        1: _s("manager"),
        2: _s("operation"),
        3: _s("apiVersion"),
        4: F("time", T.TIME),
        6: _s("fieldsType"),
        7: F("fieldsV1", T.RAW_JSON),
        8: _s("subresource"),
    },
    "LabelSelector": {
        1: F("matchLabels", T.MAP_STRING),
        2: _m("matchExpressions", "LabelSelectorRequirement", repeated=True),
    },
    "LabelSelectorRequirement": {1: _s("key"), 2: _s("operator"), 3: _s("values", repeated=True)},
    "DeleteOptions": {
        1: _i("gracePeriodSeconds", keep=True),
        2: _m("preconditions", "Preconditions"),
        3: _b("orphanDependents", keep=True),
        4: _s("propagationPolicy"),
        5: _s("dryRun", repeated=True),
        6: _b("ignoreStoreReadErrorWithClusterBreakingPotential", keep=True),
    },
    "Preconditions": {1: _s("uid", keep=True), 2: _s("resourceVersion", keep=True)},
    # -- core ------------------------------------------------------------------------------------------------
    "ConfigMap": {
        1: _m("metadata", "ObjectMeta"),
        2: F("data", T.MAP_STRING),
        3: F("binaryData", T.MAP_BYTES),
        4: _b("immutable", keep=True),
    },
    "Secret": {
        1: _m("metadata", "ObjectMeta"),
        2: F("data", T.MAP_BYTES),
        3: _s("type"),
        4: F("stringData", T.MAP_STRING),
        5: _b("immutable", keep=True),
    },
    "Namespace": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: _s("finalizers", repeated=True)},
    "ServiceAccount": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("secrets", "ObjectReference", repeated=True),
        3: _m("imagePullSecrets", "LocalObjectReference", repeated=True),
        4: _b("automountServiceAccountToken", keep=True),
    },
    "ObjectReference": {
        1: _s("kind"),
        2: _s("namespace"),
        3: _s("name"),
        4: _s("uid"),
        5: _s("apiVersion"),
        6: _s("resourceVersion"),
        7: _s("fieldPath"),
    },
    "LocalObjectReference": {1: _s("name")},
    "Service": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: _m("ports", "ServicePort", repeated=True),
        2: F("selector", T.MAP_STRING),
        3: _s("clusterIP"),
        4: _s("type"),
        5: _s("externalIPs", repeated=True),
        7: _s("sessionAffinity"),
        10: _s("externalName"),
        11: _s("externalTrafficPolicy"),
        18: _s("clusterIPs", repeated=True),
    },
    "ServicePort": {
        1: _s("name"),
        2: _s("protocol"),
        3: _i("port"),
        4: F("targetPort", T.INT_OR_STRING),
        5: _i("nodePort"),
        6: _s("appProtocol", keep=True),
    },
    "ResourceQuota": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: F("hard", T.MAP_QUANTITY), 2: _s("scopes", repeated=True)},
    # -- workloads -------------------------------------------------------------------------------------------
    "Deployment": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "DeploymentSpec")},
    "DeploymentSpec": {
        1: _i("replicas", keep=True),
        2: _m("selector", "LabelSelector", keep=True),
        3: _m("template", "PodTemplateSpec"),
        4: _m("strategy", "DeploymentStrategy"),
        5: _i("minReadySeconds"),
        6: _i("revisionHistoryLimit", keep=True),
        7: _b("paused"),
        9: _i("progressDeadlineSeconds", keep=True),
    },
    "DeploymentStrategy": {1: _s("type"), 2: _m("rollingUpdate", "RollingUpdateDeployment", keep=True)},
    "RollingUpdateDeployment": {
        1: F("maxUnavailable", T.INT_OR_STRING, keep=True),
        2: F("maxSurge", T.INT_OR_STRING, keep=True),
    },
    "Job": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "JobSpec")},
    "JobSpec": {
        1: _i("parallelism", keep=True),
        2: _i("completions", keep=True),
        3: _i("activeDeadlineSeconds", keep=True),
        4: _m("selector", "LabelSelector", keep=True),
        5: _b("manualSelector", keep=True),
        6: _m("template", "PodTemplateSpec"),
        7: _i("backoffLimit", keep=True),
        8: _i("ttlSecondsAfterFinished", keep=True),
        9: _s("completionMode", keep=True),
        10: _b("suspend", keep=True),
        11: _m("podFailurePolicy", "PodFailurePolicy", keep=True),
        12: _i("backoffLimitPerIndex", keep=True),
        13: _i("maxFailedIndexes", keep=True),
        14: _s("podReplacementPolicy", keep=True),
        15: _s("managedBy", keep=True),
        16: _m("successPolicy", "SuccessPolicy", keep=True),
    },
    "PodFailurePolicy": {1: _m("rules", "PodFailurePolicyRule", repeated=True)},
    "PodFailurePolicyRule": {
        1: _s("action"),
        2: _m("onExitCodes", "PodFailurePolicyOnExitCodesRequirement", keep=True),
        3: _m("onPodConditions", "PodFailurePolicyOnPodConditionsPattern", repeated=True),
    },
    "PodFailurePolicyOnExitCodesRequirement": {
        1: _s("containerName", keep=True),
        2: _s("operator"),
        3: F("values", T.INT, repeated=True),
    },
    "PodFailurePolicyOnPodConditionsPattern": {1: _s("type"), 2: _s("status")},
    "SuccessPolicy": {1: _m("rules", "SuccessPolicyRule", repeated=True)},
    "SuccessPolicyRule": {1: _s("succeededIndexes", keep=True), 2: _i("succeededCount", keep=True)},
    "CronJob": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "CronJobSpec")},
    "CronJobSpec": {
        1: _s("schedule"),
        2: _i("startingDeadlineSeconds", keep=True),
        3: _s("concurrencyPolicy"),
        4: _b("suspend", keep=True),
        5: _m("jobTemplate", "JobTemplateSpec"),
        6: _i("successfulJobsHistoryLimit", keep=True),
        7: _i("failedJobsHistoryLimit", keep=True),
        8: _s("timeZone", keep=True),
    },
    "JobTemplateSpec": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "JobSpec")},
    # -- pods (core/v1): everything reachable from PodSpec, because `kubectl create job --from=cronjob/...` copies
    # a whole pod template and `kubectl debug` sends a whole Pod -------------------------------------------------
    # status (3) is left out: clients send it all-zero on create, which the unknown-field rule skips.
    "Pod": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "PodSpec")},
    "PodTemplateSpec": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "PodSpec")},
    "PodSpec": {
        1: _m("volumes", "Volume", repeated=True),
        2: _m("containers", "Container", repeated=True),
        3: _s("restartPolicy"),
        4: _i("terminationGracePeriodSeconds", keep=True),
        5: _i("activeDeadlineSeconds", keep=True),
        6: _s("dnsPolicy"),
        7: F("nodeSelector", T.MAP_STRING),
        8: _s("serviceAccountName"),
        9: _s("serviceAccount"),
        10: _s("nodeName"),
        11: _b("hostNetwork"),
        12: _b("hostPID"),
        13: _b("hostIPC"),
        14: _m("securityContext", "PodSecurityContext", keep=True),
        15: _m("imagePullSecrets", "LocalObjectReference", repeated=True),
        16: _s("hostname"),
        17: _s("subdomain"),
        18: _m("affinity", "Affinity", keep=True),
        19: _s("schedulerName"),
        20: _m("initContainers", "Container", repeated=True),
        21: _b("automountServiceAccountToken", keep=True),
        22: _m("tolerations", "Toleration", repeated=True),
        23: _m("hostAliases", "HostAlias", repeated=True),
        24: _s("priorityClassName"),
        25: _i("priority", keep=True),
        26: _m("dnsConfig", "PodDNSConfig", keep=True),
        27: _b("shareProcessNamespace", keep=True),
        28: _m("readinessGates", "PodReadinessGate", repeated=True),
        29: _s("runtimeClassName", keep=True),
        30: _b("enableServiceLinks", keep=True),
        31: _s("preemptionPolicy", keep=True),
        32: F("overhead", T.MAP_QUANTITY),
        33: _m("topologySpreadConstraints", "TopologySpreadConstraint", repeated=True),
        34: _m("ephemeralContainers", "EphemeralContainer", repeated=True),
        35: _b("setHostnameAsFQDN", keep=True),
        36: _m("os", "PodOS", keep=True),
        37: _b("hostUsers", keep=True),
        38: _m("schedulingGates", "PodSchedulingGate", repeated=True),
        39: _m("resourceClaims", "PodResourceClaim", repeated=True),
        40: _m("resources", "ResourceRequirements", keep=True),
        41: _s("hostnameOverride", keep=True),
        42: _m("workloadRef", "WorkloadReference", keep=True),
    },
    "PodSecurityContext": {
        1: _m("seLinuxOptions", "SELinuxOptions", keep=True),
        2: _i("runAsUser", keep=True),
        3: _b("runAsNonRoot", keep=True),
        4: F("supplementalGroups", T.INT, repeated=True),
        5: _i("fsGroup", keep=True),
        6: _i("runAsGroup", keep=True),
        7: _m("sysctls", "Sysctl", repeated=True),
        8: _m("windowsOptions", "WindowsSecurityContextOptions", keep=True),
        9: _s("fsGroupChangePolicy", keep=True),
        10: _m("seccompProfile", "SeccompProfile", keep=True),
        11: _m("appArmorProfile", "AppArmorProfile", keep=True),
        12: _s("supplementalGroupsPolicy", keep=True),
        13: _s("seLinuxChangePolicy", keep=True),
    },
    "Sysctl": {1: _s("name"), 2: _s("value", keep=True)},
    "SecurityContext": {
        1: _m("capabilities", "Capabilities", keep=True),
        2: _b("privileged", keep=True),
        3: _m("seLinuxOptions", "SELinuxOptions", keep=True),
        4: _i("runAsUser", keep=True),
        5: _b("runAsNonRoot", keep=True),
        6: _b("readOnlyRootFilesystem", keep=True),
        7: _b("allowPrivilegeEscalation", keep=True),
        8: _i("runAsGroup", keep=True),
        9: _s("procMount", keep=True),
        10: _m("windowsOptions", "WindowsSecurityContextOptions", keep=True),
        11: _m("seccompProfile", "SeccompProfile", keep=True),
        12: _m("appArmorProfile", "AppArmorProfile", keep=True),
        13: _m("ulimits", "Ulimit", repeated=True),
    },
    "Capabilities": {1: _s("add", repeated=True), 2: _s("drop", repeated=True)},
    "SELinuxOptions": {1: _s("user"), 2: _s("role"), 3: _s("type"), 4: _s("level")},
    "WindowsSecurityContextOptions": {
        1: _s("gmsaCredentialSpecName", keep=True),
        2: _s("gmsaCredentialSpec", keep=True),
        3: _s("runAsUserName", keep=True),
        4: _b("hostProcess", keep=True),
    },
    "SeccompProfile": {1: _s("type"), 2: _s("localhostProfile", keep=True)},
    "AppArmorProfile": {1: _s("type"), 2: _s("localhostProfile", keep=True)},
    "Ulimit": {1: _s("name"), 2: _i("hard", keep=True), 3: _i("soft", keep=True)},
    "Affinity": {
        1: _m("nodeAffinity", "NodeAffinity", keep=True),
        2: _m("podAffinity", "PodAffinity", keep=True),
        3: _m("podAntiAffinity", "PodAffinity", keep=True),  # PodAntiAffinity has the same two fields
    },
    "NodeAffinity": {
        1: _m("requiredDuringSchedulingIgnoredDuringExecution", "NodeSelector", keep=True),
        2: _m("preferredDuringSchedulingIgnoredDuringExecution", "PreferredSchedulingTerm", repeated=True),
    },
    "NodeSelector": {1: _m("nodeSelectorTerms", "NodeSelectorTerm", repeated=True)},
    "NodeSelectorTerm": {
        1: _m("matchExpressions", "NodeSelectorRequirement", repeated=True),
        2: _m("matchFields", "NodeSelectorRequirement", repeated=True),
    },
    "NodeSelectorRequirement": {1: _s("key"), 2: _s("operator"), 3: _s("values", repeated=True)},
    "PreferredSchedulingTerm": {1: _i("weight"), 2: _m("preference", "NodeSelectorTerm", keep=True)},
    "PodAffinity": {
        1: _m("requiredDuringSchedulingIgnoredDuringExecution", "PodAffinityTerm", repeated=True),
        2: _m("preferredDuringSchedulingIgnoredDuringExecution", "WeightedPodAffinityTerm", repeated=True),
    },
    "PodAffinityTerm": {
        1: _m("labelSelector", "LabelSelector", keep=True),
        2: _s("namespaces", repeated=True),
        3: _s("topologyKey"),
        4: _m("namespaceSelector", "LabelSelector", keep=True),
        5: _s("matchLabelKeys", repeated=True),
        6: _s("mismatchLabelKeys", repeated=True),
    },
    "WeightedPodAffinityTerm": {1: _i("weight"), 2: _m("podAffinityTerm", "PodAffinityTerm", keep=True)},
    "Toleration": {
        1: _s("key"),
        2: _s("operator"),
        3: _s("value"),
        4: _s("effect"),
        5: _i("tolerationSeconds", keep=True),
    },
    "HostAlias": {1: _s("ip"), 2: _s("hostnames", repeated=True)},
    "PodDNSConfig": {
        1: _s("nameservers", repeated=True),
        2: _s("searches", repeated=True),
        3: _m("options", "PodDNSConfigOption", repeated=True),
    },
    "PodDNSConfigOption": {1: _s("name"), 2: _s("value", keep=True)},
    "PodReadinessGate": {1: _s("conditionType")},
    "TopologySpreadConstraint": {
        1: _i("maxSkew"),
        2: _s("topologyKey"),
        3: _s("whenUnsatisfiable"),
        4: _m("labelSelector", "LabelSelector", keep=True),
        5: _i("minDomains", keep=True),
        6: _s("nodeAffinityPolicy", keep=True),
        7: _s("nodeTaintsPolicy", keep=True),
        8: _s("matchLabelKeys", repeated=True),
    },
    "PodOS": {1: _s("name")},
    "PodSchedulingGate": {1: _s("name")},
    "PodResourceClaim": {
        1: _s("name"),
        3: _s("resourceClaimName", keep=True),
        4: _s("resourceClaimTemplateName", keep=True),
    },
    "WorkloadReference": {1: _s("name"), 2: _s("podGroup"), 3: _s("podGroupReplicaKey")},
    # -- containers ------------------------------------------------------------------------------------------
    "Container": {
        1: _s("name"),
        2: _s("image"),
        3: _s("command", repeated=True),
        4: _s("args", repeated=True),
        5: _s("workingDir"),
        6: _m("ports", "ContainerPort", repeated=True),
        7: _m("env", "EnvVar", repeated=True),
        8: _m("resources", "ResourceRequirements"),
        9: _m("volumeMounts", "VolumeMount", repeated=True),
        10: _m("livenessProbe", "Probe", keep=True),
        11: _m("readinessProbe", "Probe", keep=True),
        12: _m("lifecycle", "Lifecycle", keep=True),
        13: _s("terminationMessagePath"),
        14: _s("imagePullPolicy"),
        15: _m("securityContext", "SecurityContext", keep=True),
        16: _b("stdin"),
        17: _b("stdinOnce"),
        18: _b("tty"),
        19: _m("envFrom", "EnvFromSource", repeated=True),
        20: _s("terminationMessagePolicy"),
        21: _m("volumeDevices", "VolumeDevice", repeated=True),
        22: _m("startupProbe", "Probe", keep=True),
        23: _m("resizePolicy", "ContainerResizePolicy", repeated=True),
        24: _s("restartPolicy", keep=True),
        25: _m("restartPolicyRules", "ContainerRestartRule", repeated=True),
    },
    # EphemeralContainerCommon repeats Container's fields and numbers; JSON inlines it.
    "EphemeralContainer": {1: _inline("Container"), 2: _s("targetContainerName")},
    "ContainerPort": {
        1: _s("name"),
        2: _i("hostPort"),
        3: _i("containerPort"),
        4: _s("protocol"),
        5: _s("hostIP"),
    },
    "ContainerResizePolicy": {1: _s("resourceName"), 2: _s("restartPolicy")},
    "ContainerRestartRule": {
        1: _s("action"),
        2: _m("exitCodes", "ContainerRestartRuleOnExitCodes", keep=True),
    },
    "ContainerRestartRuleOnExitCodes": {1: _s("operator"), 2: F("values", T.INT, repeated=True)},
    "VolumeDevice": {1: _s("name"), 2: _s("devicePath")},
    "EnvVar": {1: _s("name"), 2: _s("value"), 3: _m("valueFrom", "EnvVarSource", keep=True)},
    "EnvVarSource": {
        1: _m("fieldRef", "ObjectFieldSelector", keep=True),
        2: _m("resourceFieldRef", "ResourceFieldSelector", keep=True),
        3: _m("configMapKeyRef", "KeySelector", keep=True),
        4: _m("secretKeyRef", "KeySelector", keep=True),
        5: _m("fileKeyRef", "FileKeySelector", keep=True),
    },
    "ObjectFieldSelector": {1: _s("apiVersion"), 2: _s("fieldPath")},
    "ResourceFieldSelector": {1: _s("containerName"), 2: _s("resource"), 3: F("divisor", T.QUANTITY)},
    # ConfigMapKeySelector and SecretKeySelector share one layout.
    "KeySelector": {1: _inline("LocalObjectReference"), 2: _s("key"), 3: _b("optional", keep=True)},
    "FileKeySelector": {1: _s("volumeName"), 2: _s("path"), 3: _s("key"), 4: _b("optional", keep=True)},
    "EnvFromSource": {
        1: _s("prefix"),
        2: _m("configMapRef", "OptionalRef", keep=True),
        3: _m("secretRef", "OptionalRef", keep=True),
    },
    # ConfigMapEnvSource and SecretEnvSource share one layout.
    "OptionalRef": {1: _inline("LocalObjectReference"), 2: _b("optional", keep=True)},
    "ResourceRequirements": {
        1: F("limits", T.MAP_QUANTITY),
        2: F("requests", T.MAP_QUANTITY),
        3: _m("claims", "ResourceClaim", repeated=True),
    },
    "ResourceClaim": {1: _s("name"), 2: _s("request")},
    "VolumeMount": {
        1: _s("name"),
        2: _b("readOnly"),
        3: _s("mountPath"),
        4: _s("subPath"),
        5: _s("mountPropagation", keep=True),
        6: _s("subPathExpr"),
        7: _s("recursiveReadOnly", keep=True),
    },
    "Probe": {
        1: _inline("ProbeHandler"),
        2: _i("initialDelaySeconds"),
        3: _i("timeoutSeconds"),
        4: _i("periodSeconds"),
        5: _i("successThreshold"),
        6: _i("failureThreshold"),
        7: _i("terminationGracePeriodSeconds", keep=True),
    },
    "ProbeHandler": {
        1: _m("exec", "ExecAction", keep=True),
        2: _m("httpGet", "HTTPGetAction", keep=True),
        3: _m("tcpSocket", "TCPSocketAction", keep=True),
        4: _m("grpc", "GRPCAction", keep=True),
    },
    "ExecAction": {1: _s("command", repeated=True)},
    "HTTPGetAction": {
        1: _s("path"),
        2: F("port", T.INT_OR_STRING),
        3: _s("host"),
        4: _s("scheme"),
        5: _m("httpHeaders", "HTTPHeader", repeated=True),
    },
    "HTTPHeader": {1: _s("name"), 2: _s("value", keep=True)},
    "TCPSocketAction": {1: F("port", T.INT_OR_STRING), 2: _s("host")},
    "GRPCAction": {1: _i("port"), 2: _s("service", keep=True)},
    "SleepAction": {1: _i("seconds", keep=True)},
    "Lifecycle": {
        1: _m("postStart", "LifecycleHandler", keep=True),
        2: _m("preStop", "LifecycleHandler", keep=True),
        3: _s("stopSignal", keep=True),
    },
    "LifecycleHandler": {
        1: _m("exec", "ExecAction", keep=True),
        2: _m("httpGet", "HTTPGetAction", keep=True),
        3: _m("tcpSocket", "TCPSocketAction", keep=True),
        4: _m("sleep", "SleepAction", keep=True),
    },
    # -- volumes: every VolumeSource member is a pointer, so an empty one (emptyDir: {}) is kept ---------------
    "Volume": {1: _s("name"), 2: _inline("VolumeSource")},
    "VolumeSource": {
        1: _m("hostPath", "HostPathVolumeSource", keep=True),
        2: _m("emptyDir", "EmptyDirVolumeSource", keep=True),
        3: _m("gcePersistentDisk", "GCEPersistentDiskVolumeSource", keep=True),
        4: _m("awsElasticBlockStore", "AWSElasticBlockStoreVolumeSource", keep=True),
        5: _m("gitRepo", "GitRepoVolumeSource", keep=True),
        6: _m("secret", "SecretVolumeSource", keep=True),
        7: _m("nfs", "NFSVolumeSource", keep=True),
        8: _m("iscsi", "ISCSIVolumeSource", keep=True),
        9: _m("glusterfs", "GlusterfsVolumeSource", keep=True),
        10: _m("persistentVolumeClaim", "PersistentVolumeClaimVolumeSource", keep=True),
        11: _m("rbd", "RBDVolumeSource", keep=True),
        12: _m("flexVolume", "FlexVolumeSource", keep=True),
        13: _m("cinder", "CinderVolumeSource", keep=True),
        14: _m("cephfs", "CephFSVolumeSource", keep=True),
        15: _m("flocker", "FlockerVolumeSource", keep=True),
        16: _m("downwardAPI", "DownwardAPIVolumeSource", keep=True),
        17: _m("fc", "FCVolumeSource", keep=True),
        18: _m("azureFile", "AzureFileVolumeSource", keep=True),
        19: _m("configMap", "ConfigMapVolumeSource", keep=True),
        20: _m("vsphereVolume", "VsphereVirtualDiskVolumeSource", keep=True),
        21: _m("quobyte", "QuobyteVolumeSource", keep=True),
        22: _m("azureDisk", "AzureDiskVolumeSource", keep=True),
        23: _m("photonPersistentDisk", "PhotonPersistentDiskVolumeSource", keep=True),
        24: _m("portworxVolume", "PortworxVolumeSource", keep=True),
        25: _m("scaleIO", "ScaleIOVolumeSource", keep=True),
        26: _m("projected", "ProjectedVolumeSource", keep=True),
        27: _m("storageos", "StorageOSVolumeSource", keep=True),
        28: _m("csi", "CSIVolumeSource", keep=True),
        29: _m("ephemeral", "EphemeralVolumeSource", keep=True),
        30: _m("image", "ImageVolumeSource", keep=True),
    },
    "HostPathVolumeSource": {1: _s("path"), 2: _s("type", keep=True)},
    "EmptyDirVolumeSource": {1: _s("medium"), 2: F("sizeLimit", T.QUANTITY, keep=True)},
    "GCEPersistentDiskVolumeSource": {
        1: _s("pdName"),
        2: _s("fsType"),
        3: _i("partition"),
        4: _b("readOnly"),
    },
    "AWSElasticBlockStoreVolumeSource": {
        1: _s("volumeID"),
        2: _s("fsType"),
        3: _i("partition"),
        4: _b("readOnly"),
    },
    "GitRepoVolumeSource": {1: _s("repository"), 2: _s("revision"), 3: _s("directory")},
    "SecretVolumeSource": {
        1: _s("secretName"),
        2: _m("items", "KeyToPath", repeated=True),
        3: _i("defaultMode", keep=True),
        4: _b("optional", keep=True),
    },
    "NFSVolumeSource": {1: _s("server"), 2: _s("path"), 3: _b("readOnly")},
    "ISCSIVolumeSource": {
        1: _s("targetPortal"),
        2: _s("iqn"),
        3: _i("lun", keep=True),
        4: _s("iscsiInterface"),
        5: _s("fsType"),
        6: _b("readOnly"),
        7: _s("portals", repeated=True),
        8: _b("chapAuthDiscovery"),
        10: _m("secretRef", "LocalObjectReference", keep=True),
        11: _b("chapAuthSession"),
        12: _s("initiatorName", keep=True),
    },
    "GlusterfsVolumeSource": {1: _s("endpoints"), 2: _s("path"), 3: _b("readOnly")},
    "PersistentVolumeClaimVolumeSource": {1: _s("claimName"), 2: _b("readOnly")},
    "RBDVolumeSource": {
        1: _s("monitors", repeated=True),
        2: _s("image"),
        3: _s("fsType"),
        4: _s("pool"),
        5: _s("user"),
        6: _s("keyring"),
        7: _m("secretRef", "LocalObjectReference", keep=True),
        8: _b("readOnly"),
    },
    "FlexVolumeSource": {
        1: _s("driver"),
        2: _s("fsType"),
        3: _m("secretRef", "LocalObjectReference", keep=True),
        4: _b("readOnly"),
        5: F("options", T.MAP_STRING),
    },
    "CinderVolumeSource": {
        1: _s("volumeID"),
        2: _s("fsType"),
        3: _b("readOnly"),
        4: _m("secretRef", "LocalObjectReference", keep=True),
    },
    "CephFSVolumeSource": {
        1: _s("monitors", repeated=True),
        2: _s("path"),
        3: _s("user"),
        4: _s("secretFile"),
        5: _m("secretRef", "LocalObjectReference", keep=True),
        6: _b("readOnly"),
    },
    "FlockerVolumeSource": {1: _s("datasetName"), 2: _s("datasetUUID")},
    "DownwardAPIVolumeSource": {
        1: _m("items", "DownwardAPIVolumeFile", repeated=True),
        2: _i("defaultMode", keep=True),
    },
    "DownwardAPIVolumeFile": {
        1: _s("path"),
        2: _m("fieldRef", "ObjectFieldSelector", keep=True),
        3: _m("resourceFieldRef", "ResourceFieldSelector", keep=True),
        4: _i("mode", keep=True),
    },
    "FCVolumeSource": {
        1: _s("targetWWNs", repeated=True),
        2: _i("lun", keep=True),
        3: _s("fsType"),
        4: _b("readOnly"),
        5: _s("wwids", repeated=True),
    },
    "AzureFileVolumeSource": {1: _s("secretName"), 2: _s("shareName"), 3: _b("readOnly")},
    "ConfigMapVolumeSource": {
        1: _inline("LocalObjectReference"),
        2: _m("items", "KeyToPath", repeated=True),
        3: _i("defaultMode", keep=True),
        4: _b("optional", keep=True),
    },
    "VsphereVirtualDiskVolumeSource": {
        1: _s("volumePath"),
        2: _s("fsType"),
        3: _s("storagePolicyName"),
        4: _s("storagePolicyID"),
    },
    "QuobyteVolumeSource": {
        1: _s("registry"),
        2: _s("volume"),
        3: _b("readOnly"),
        4: _s("user"),
        5: _s("group"),
        6: _s("tenant"),
    },
    "AzureDiskVolumeSource": {
        1: _s("diskName"),
        2: _s("diskURI"),
        3: _s("cachingMode", keep=True),
        4: _s("fsType", keep=True),
        5: _b("readOnly", keep=True),
        6: _s("kind", keep=True),
    },
    "PhotonPersistentDiskVolumeSource": {1: _s("pdID"), 2: _s("fsType")},
    "PortworxVolumeSource": {1: _s("volumeID"), 2: _s("fsType"), 3: _b("readOnly")},
    "ScaleIOVolumeSource": {
        1: _s("gateway"),
        2: _s("system"),
        3: _m("secretRef", "LocalObjectReference", keep=True),
        4: _b("sslEnabled"),
        5: _s("protectionDomain"),
        6: _s("storagePool"),
        7: _s("storageMode"),
        8: _s("volumeName"),
        9: _s("fsType"),
        10: _b("readOnly"),
    },
    "ProjectedVolumeSource": {
        1: _m("sources", "VolumeProjection", repeated=True),
        2: _i("defaultMode", keep=True),
    },
    "VolumeProjection": {
        1: _m("secret", "KeyProjection", keep=True),
        2: _m("downwardAPI", "DownwardAPIProjection", keep=True),
        3: _m("configMap", "KeyProjection", keep=True),
        4: _m("serviceAccountToken", "ServiceAccountTokenProjection", keep=True),
        5: _m("clusterTrustBundle", "ClusterTrustBundleProjection", keep=True),
        6: _m("podCertificate", "PodCertificateProjection", keep=True),
    },
    # SecretProjection and ConfigMapProjection share one layout (field 3 is unused upstream).
    "KeyProjection": {
        1: _inline("LocalObjectReference"),
        2: _m("items", "KeyToPath", repeated=True),
        4: _b("optional", keep=True),
    },
    "DownwardAPIProjection": {1: _m("items", "DownwardAPIVolumeFile", repeated=True)},
    "ServiceAccountTokenProjection": {
        1: _s("audience"),
        2: _i("expirationSeconds", keep=True),
        3: _s("path"),
    },
    "ClusterTrustBundleProjection": {
        1: _s("name", keep=True),
        2: _s("signerName", keep=True),
        3: _m("labelSelector", "LabelSelector", keep=True),
        4: _s("path"),
        5: _b("optional", keep=True),
    },
    "PodCertificateProjection": {
        1: _s("signerName"),
        2: _s("keyType"),
        3: _i("maxExpirationSeconds", keep=True),
        4: _s("credentialBundlePath"),
        5: _s("keyPath"),
        6: _s("certificateChainPath"),
        7: F("userAnnotations", T.MAP_STRING),
    },
    "StorageOSVolumeSource": {
        1: _s("volumeName"),
        2: _s("volumeNamespace"),
        3: _s("fsType"),
        4: _b("readOnly"),
        5: _m("secretRef", "LocalObjectReference", keep=True),
    },
    "CSIVolumeSource": {
        1: _s("driver"),
        2: _b("readOnly", keep=True),
        3: _s("fsType", keep=True),
        4: F("volumeAttributes", T.MAP_STRING),
        5: _m("nodePublishSecretRef", "LocalObjectReference", keep=True),
    },
    "EphemeralVolumeSource": {1: _m("volumeClaimTemplate", "PersistentVolumeClaimTemplate", keep=True)},
    "PersistentVolumeClaimTemplate": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "PersistentVolumeClaimSpec"),
    },
    "PersistentVolumeClaimSpec": {
        1: _s("accessModes", repeated=True),
        2: _m("resources", "VolumeResourceRequirements"),
        3: _s("volumeName"),
        4: _m("selector", "LabelSelector", keep=True),
        5: _s("storageClassName", keep=True),
        6: _s("volumeMode", keep=True),
        7: _m("dataSource", "TypedLocalObjectReference", keep=True),
        8: _m("dataSourceRef", "TypedObjectReference", keep=True),
        9: _s("volumeAttributesClassName", keep=True),
    },
    "VolumeResourceRequirements": {1: F("limits", T.MAP_QUANTITY), 2: F("requests", T.MAP_QUANTITY)},
    "TypedObjectReference": {
        1: _s("apiGroup", keep=True),
        2: _s("kind"),
        3: _s("name"),
        4: _s("namespace", keep=True),
    },
    "ImageVolumeSource": {1: _s("reference"), 2: _s("pullPolicy")},
    "KeyToPath": {1: _s("key"), 2: _s("path"), 3: _i("mode", keep=True)},
    # -- auth ------------------------------------------------------------------------------------------------
    "TokenRequest": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {
        1: _s("audiences", repeated=True),
        3: _m("boundObjectRef", "BoundObjectReference", keep=True),
        4: _i("expirationSeconds", keep=True),
    },
    "BoundObjectReference": {1: _s("kind"), 2: _s("apiVersion"), 3: _s("name"), 4: _s("uid")},
    "SelfSubjectAccessReview": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "SelfSubjectAccessReviewSpec"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: _m("resourceAttributes", "ResourceAttributes", keep=True),
        2: _m("nonResourceAttributes", "NonResourceAttributes", keep=True),
    },
    "ResourceAttributes": {
        1: _s("namespace"),
        2: _s("verb"),
        3: _s("group"),
        4: _s("version"),
        5: _s("resource"),
        6: _s("subresource"),
        7: _s("name"),
        8: _m("fieldSelector", "SelectorAttributes", keep=True),
        9: _m("labelSelector", "SelectorAttributes", keep=True),
    },
    "SelectorAttributes": {1: _s("rawSelector")},
    "NonResourceAttributes": {1: _s("path"), 2: _s("verb")},
    "SelfSubjectRulesReview": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: _s("namespace")},
    "SelfSubjectReview": {1: _m("metadata", "ObjectMeta")},
    # -- rbac ------------------------------------------------------------------------------------------------
    "Role": {1: _m("metadata", "ObjectMeta"), 2: _m("rules", "PolicyRule", repeated=True)},
    "ClusterRole": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("rules", "PolicyRule", repeated=True),
        3: _m("aggregationRule", "AggregationRule", keep=True),
    },
    "PolicyRule": {
        1: _s("verbs", repeated=True),
        2: _s("apiGroups", repeated=True),
        3: _s("resources", repeated=True),
        4: _s("resourceNames", repeated=True),
        5: _s("nonResourceURLs", repeated=True),
    },
    "AggregationRule": {1: _m("clusterRoleSelectors", "LabelSelector", repeated=True)},
    "RoleBinding": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("subjects", "Subject", repeated=True),
        3: _m("roleRef", "RoleRef"),
    },
    "Subject": {1: _s("kind"), 2: _s("apiGroup"), 3: _s("name"), 4: _s("namespace")},
    "RoleRef": {1: _s("apiGroup"), 2: _s("kind"), 3: _s("name")},
    # -- what schedulers and controllers written in Go send (client-go defaults to protobuf for built-ins) ------
    "Binding": {1: _m("metadata", "ObjectMeta"), 2: _m("target", "ObjectReference")},
    "Eviction": {1: _m("metadata", "ObjectMeta"), 2: _m("deleteOptions", "DeleteOptions", keep=True)},
    "Lease": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "LeaseSpec")},
    "LeaseSpec": {
        1: _s("holderIdentity", keep=True),
        2: _i("leaseDurationSeconds", keep=True),
        3: F("acquireTime", T.MICRO_TIME),
        4: F("renewTime", T.MICRO_TIME),
        5: _i("leaseTransitions", keep=True),
        6: _s("strategy", keep=True),
        7: _s("preferredHolder", keep=True),
    },
    "Event": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("involvedObject", "ObjectReference"),
        3: _s("reason"),
        4: _s("message"),
        5: _m("source", "EventSource"),
        6: F("firstTimestamp", T.TIME),
        7: F("lastTimestamp", T.TIME),
        8: _i("count"),
        9: _s("type"),
        10: F("eventTime", T.MICRO_TIME),
        11: _m("series", "EventSeries", keep=True),
        12: _s("action"),
        13: _m("related", "ObjectReference", keep=True),
        14: _s("reportingComponent"),
        15: _s("reportingInstance"),
    },
    "EventSource": {1: _s("component"), 2: _s("host")},
    "EventSeries": {1: _i("count"), 2: F("lastObservedTime", T.MICRO_TIME)},
    "EventsV1Event": {
        1: _m("metadata", "ObjectMeta"),
        2: F("eventTime", T.MICRO_TIME),
        3: _m("series", "EventSeries", keep=True),
        4: _s("reportingController"),
        5: _s("reportingInstance"),
        6: _s("action"),
        7: _s("reason"),
        8: _m("regarding", "ObjectReference"),
        9: _m("related", "ObjectReference", keep=True),
        10: _s("note"),
        11: _s("type"),
        12: _m("deprecatedSource", "EventSource"),
        13: F("deprecatedFirstTimestamp", T.TIME),
        14: F("deprecatedLastTimestamp", T.TIME),
        15: _i("deprecatedCount"),
    },
    # -- scheduling, policy, networking ----------------------------------------------------------------------
    "PriorityClass": {
        1: _m("metadata", "ObjectMeta"),
        2: _i("value", keep=True),
        3: _b("globalDefault"),
        4: _s("description"),
        5: _s("preemptionPolicy", keep=True),
    },
    "PodDisruptionBudget": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {
        1: F("minAvailable", T.INT_OR_STRING, keep=True),
        2: _m("selector", "LabelSelector", keep=True),
        3: F("maxUnavailable", T.INT_OR_STRING, keep=True),
        4: _s("unhealthyPodEvictionPolicy", keep=True),
    },
    "Ingress": {1: _m("metadata", "ObjectMeta"), 2: _m("spec", "IngressSpec")},
    "IngressSpec": {
        1: _m("defaultBackend", "IngressBackend", keep=True),
        2: _m("tls", "IngressTLS", repeated=True),
        3: _m("rules", "IngressRule", repeated=True),
        4: _s("ingressClassName", keep=True),
    },
    "IngressTLS": {1: _s("hosts", repeated=True), 2: _s("secretName")},
    "IngressRule": {1: _s("host"), 2: _inline("IngressRuleValue")},
    "IngressRuleValue": {1: _m("http", "HTTPIngressRuleValue", keep=True)},
    "HTTPIngressRuleValue": {1: _m("paths", "HTTPIngressPath", repeated=True)},
    "HTTPIngressPath": {1: _s("path"), 2: _m("backend", "IngressBackend"), 3: _s("pathType", keep=True)},
    "IngressBackend": {
        3: _m("resource", "TypedLocalObjectReference", keep=True),
        4: _m("service", "IngressServiceBackend", keep=True),
    },
    "IngressServiceBackend": {1: _s("name"), 2: _m("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: _s("name"), 2: _i("number")},
    "TypedLocalObjectReference": {1: _s("apiGroup", keep=True), 2: _s("kind"), 3: _s("name")},
    # -- certificates (kubectl certificate approve|deny sends the whole CSR) -----------------------------------
    "CertificateSigningRequest": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "CertificateSigningRequestSpec"),
        3: _m("status", "CertificateSigningRequestStatus"),
    },
    "CertificateSigningRequestSpec": {
        1: F("request", T.BYTES),
        2: _s("username"),
        3: _s("uid"),
        4: _s("groups", repeated=True),
        5: _s("usages", repeated=True),
        7: _s("signerName"),
        8: _i("expirationSeconds", keep=True),
    },
    "CertificateSigningRequestStatus": {
        1: _m("conditions", "CertificateSigningRequestCondition", repeated=True),
        2: F("certificate", T.BYTES),
    },
    "CertificateSigningRequestCondition": {
        1: _s("type"),
        2: _s("reason"),
        3: _s("message"),
        4: F("lastUpdateTime", T.TIME),
        5: F("lastTransitionTime", T.TIME),
        6: _s("status"),
    },
    # -- autoscaling (kubectl autoscale tries v2, then v1) -----------------------------------------------------
    "CrossVersionObjectReference": {1: _s("kind"), 2: _s("name"), 3: _s("apiVersion")},
    "HorizontalPodAutoscalerV1": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "HorizontalPodAutoscalerSpecV1"),
        3: _m("status", "HorizontalPodAutoscalerStatusV1"),
    },
    "HorizontalPodAutoscalerSpecV1": {
        1: _m("scaleTargetRef", "CrossVersionObjectReference"),
        2: _i("minReplicas", keep=True),
        3: _i("maxReplicas"),
        4: _i("targetCPUUtilizationPercentage", keep=True),
    },
    "HorizontalPodAutoscalerStatusV1": {
        1: _i("observedGeneration", keep=True),
        2: F("lastScaleTime", T.TIME),
        3: _i("currentReplicas"),
        4: _i("desiredReplicas"),
        5: _i("currentCPUUtilizationPercentage", keep=True),
    },
    "HorizontalPodAutoscalerV2": {
        1: _m("metadata", "ObjectMeta"),
        2: _m("spec", "HorizontalPodAutoscalerSpecV2"),
        3: _m("status", "HorizontalPodAutoscalerStatusV2"),
    },
    "HorizontalPodAutoscalerSpecV2": {
        1: _m("scaleTargetRef", "CrossVersionObjectReference"),
        2: _i("minReplicas", keep=True),
        3: _i("maxReplicas"),
        4: _m("metrics", "MetricSpec", repeated=True),
        5: _m("behavior", "HorizontalPodAutoscalerBehavior", keep=True),
    },
    "MetricSpec": {
        1: _s("type"),
        2: _m("object", "ObjectMetricSource", keep=True),
        3: _m("pods", "PodsMetricSource", keep=True),
        4: _m("resource", "ResourceMetricSource", keep=True),
        5: _m("external", "ExternalMetricSource", keep=True),
        7: _m("containerResource", "ContainerResourceMetricSource", keep=True),
    },
    "MetricTarget": {
        1: _s("type"),
        2: F("value", T.QUANTITY, keep=True),
        3: F("averageValue", T.QUANTITY, keep=True),
        4: _i("averageUtilization", keep=True),
    },
    "MetricIdentifier": {1: _s("name"), 2: _m("selector", "LabelSelector", keep=True)},
    "ResourceMetricSource": {1: _s("name"), 2: _m("target", "MetricTarget")},
    "ContainerResourceMetricSource": {1: _s("name"), 2: _m("target", "MetricTarget"), 3: _s("container")},
    "PodsMetricSource": {1: _m("metric", "MetricIdentifier"), 2: _m("target", "MetricTarget")},
    "ExternalMetricSource": {1: _m("metric", "MetricIdentifier"), 2: _m("target", "MetricTarget")},
    "ObjectMetricSource": {
        1: _m("describedObject", "CrossVersionObjectReference"),
        2: _m("target", "MetricTarget"),
        3: _m("metric", "MetricIdentifier"),
    },
    "HorizontalPodAutoscalerBehavior": {
        1: _m("scaleUp", "HPAScalingRules", keep=True),
        2: _m("scaleDown", "HPAScalingRules", keep=True),
    },
    "HPAScalingRules": {
        1: _s("selectPolicy", keep=True),
        2: _m("policies", "HPAScalingPolicy", repeated=True),
        3: _i("stabilizationWindowSeconds", keep=True),
        4: F("tolerance", T.QUANTITY, keep=True),
    },
    "HPAScalingPolicy": {1: _s("type"), 2: _i("value"), 3: _i("periodSeconds")},
    "HorizontalPodAutoscalerStatusV2": {
        1: _i("observedGeneration", keep=True),
        2: F("lastScaleTime", T.TIME),
        3: _i("currentReplicas"),
        4: _i("desiredReplicas"),
        6: _m("conditions", "HorizontalPodAutoscalerCondition", repeated=True),
    },
    "HorizontalPodAutoscalerCondition": {
        1: _s("type"),
        2: _s("status"),
        3: F("lastTransitionTime", T.TIME),
        4: _s("reason"),
        5: _s("message"),
        6: _i("observedGeneration"),
    },
}

# (group, kind) -> top-level message. DeleteOptions arrives under several groups' typeMeta.
KINDS: dict[tuple[str, str], str] = {
    ("", "ConfigMap"): "ConfigMap",
    ("", "Secret"): "Secret",
    ("", "Namespace"): "Namespace",
    ("", "ServiceAccount"): "ServiceAccount",
    ("", "Service"): "Service",
    ("", "ResourceQuota"): "ResourceQuota",
    ("", "Pod"): "Pod",
    ("apps", "Deployment"): "Deployment",
    ("batch", "Job"): "Job",
    ("batch", "CronJob"): "CronJob",
    ("authentication.k8s.io", "TokenRequest"): "TokenRequest",
    ("authentication.k8s.io", "SelfSubjectReview"): "SelfSubjectReview",
    ("authorization.k8s.io", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    ("rbac.authorization.k8s.io", "Role"): "Role",
    ("rbac.authorization.k8s.io", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io", "RoleBinding"): "RoleBinding",
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): "RoleBinding",
    ("scheduling.k8s.io", "PriorityClass"): "PriorityClass",
    ("policy", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("networking.k8s.io", "Ingress"): "Ingress",
    ("", "Binding"): "Binding",
    ("", "Event"): "Event",
    ("events.k8s.io", "Event"): "EventsV1Event",
    ("coordination.k8s.io", "Lease"): "Lease",
    ("policy", "Eviction"): "Eviction",
    ("certificates.k8s.io", "CertificateSigningRequest"): "CertificateSigningRequest",
}

# (apiVersion, kind) -> top-level message, for kinds whose message differs between versions.
VERSIONED_KINDS: dict[tuple[str, str], str] = {
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "HorizontalPodAutoscalerV1",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscalerV2",
}


def supported_kinds() -> list[str]:
    """``group/Kind`` names this module decodes (for messages and docs)."""
    versioned = {f"{av}/{k}" for av, k in VERSIONED_KINDS}
    return sorted({f"{g}/{k}" if g else k for g, k in KINDS} | versioned | {"DeleteOptions"})


# --------------------------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------------------------


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: int | bytes, where: str) -> str:
    if not isinstance(value, bytes):
        raise _WireError(f"{where}: expected a length-delimited string")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _WireError(f"{where}: invalid UTF-8") from exc


def _blob(value: int | bytes, where: str) -> bytes:
    if not isinstance(value, bytes):
        raise _WireError(f"{where}: expected length-delimited bytes")
    return value


def _time(buf: bytes, micro: bool = False) -> str | None:
    seconds = nanos = 0
    for number, _, value in fields(buf):
        if number == 1 and isinstance(value, int):
            seconds = _signed(value)
        elif number == 2 and isinstance(value, int):
            nanos = _signed(value)
    if seconds == 0 and nanos == 0:
        return None
    moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(buf: bytes) -> int | str:
    kind = 0
    int_val = 0
    str_val = ""
    for number, _, value in fields(buf):
        if number == 1 and isinstance(value, int):
            kind = value
        elif number == 2 and isinstance(value, int):
            int_val = _signed(value)
        elif number == 3:
            str_val = _text(value, "IntOrString.strVal")
    return str_val if kind == 1 else int_val


def _quantity(buf: bytes) -> str:
    for number, _, value in fields(buf):
        if number == 1:
            return _text(value, "Quantity.string")
    return "0"


def _map_entry(buf: bytes) -> tuple[bytes, bytes]:
    key = b""
    val = b""
    for number, _, value in fields(buf):
        if number == 1:
            key = _blob(value, "map key")
        elif number == 2:
            val = _blob(value, "map value")
    return key, val


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value is False or value == {} or value == []


def _carries_data(value: int | bytes) -> bool:
    """Whether an unknown field holds anything: Go writes every non-pointer field, so an empty struct arrives as a
    message of zeros and empty strings (a Deployment's status on create), and only non-zero content is data."""
    if isinstance(value, int):
        return value != 0
    if not value:
        return False
    try:
        inner = fields(value)
    except _WireError:
        return True  # not a message: a non-empty string or bytes
    return any(_carries_data(item) for _, _, item in inner)


def _scalar(spec: F, wire: int, value: int | bytes, where: str) -> Any:
    t = spec.type
    if t is T.STRING:
        return _text(value, where)
    if t is T.BYTES:
        return base64.b64encode(_blob(value, where)).decode("ascii")
    if t is T.INT:
        if not isinstance(value, int):
            raise _WireError(f"{where}: expected a varint")
        return _signed(value)
    if t is T.BOOL:
        if not isinstance(value, int):
            raise _WireError(f"{where}: expected a varint")
        return bool(value)
    if t is T.TIME:
        return _time(_blob(value, where))
    if t is T.MICRO_TIME:
        return _time(_blob(value, where), micro=True)
    if t is T.INT_OR_STRING:
        return _int_or_string(_blob(value, where))
    if t is T.QUANTITY:
        return _quantity(_blob(value, where))
    if t is T.RAW_JSON:
        raw = b""
        for number, _, inner in fields(_blob(value, where)):
            if number == 1:
                raw = _blob(inner, where)
        return json.loads(raw) if raw else {}
    if t is T.MESSAGE:
        return decode_message(spec.message, _blob(value, where), where)
    raise _WireError(f"{where}: unsupported field type {t.value}")


def decode_message(message: str, buf: bytes, where: str = "") -> dict[str, Any]:
    """Decode one message of the table into its JSON form (empty non-pointer fields dropped)."""
    table = MESSAGES[message]
    out: dict[str, Any] = {}
    for number, wire, value in fields(buf):
        spec = table.get(number)
        if spec is None:
            if _carries_data(value):
                raise errors.unsupported_media_type(
                    f"cannot decode protobuf field {number} of {message} (at {where or message}): this server does "
                    "not know that field and would lose its value; send the object as JSON instead "
                    "(kubectl apply -f, or Content-Type: application/json)"
                )
            continue
        here = f"{where}.{spec.name}" if spec.name else where
        if spec.type is T.INLINE:
            out.update(decode_message(spec.message, _blob(value, here), here))
            continue
        if spec.type in (T.MAP_STRING, T.MAP_BYTES, T.MAP_QUANTITY):
            key, raw = _map_entry(_blob(value, here))
            entries = out.setdefault(spec.name, {})
            name = key.decode("utf-8", errors="replace")
            if spec.type is T.MAP_STRING:
                entries[name] = raw.decode("utf-8", errors="replace")
            elif spec.type is T.MAP_BYTES:
                entries[name] = base64.b64encode(raw).decode("ascii")
            else:
                entries[name] = _quantity(raw)
            continue
        if spec.repeated and spec.type is T.INT and wire == LEN:
            # packed repeated varints
            packed = _blob(value, here)
            pos = 0
            while pos < len(packed):
                item, pos = _varint(packed, pos)
                out.setdefault(spec.name, []).append(_signed(item))
            continue
        decoded = _scalar(spec, wire, value, here)
        if spec.repeated:
            out.setdefault(spec.name, []).append(decoded)
        elif (spec.keep and decoded is not None) or not _empty(decoded):
            out[spec.name] = decoded
        else:
            out.pop(spec.name, None)
    return out


def decode(body: bytes) -> dict[str, Any]:
    """Decode a ``application/vnd.kubernetes.protobuf`` request body into the equivalent JSON object.

    Raises:
        ApiError 400: not a Kubernetes protobuf envelope, or a malformed message.
        ApiError 415: a kind this server does not decode (the message names the kinds it does and says to use JSON).
    """
    if not body.startswith(MAGIC):
        raise errors.bad_request(
            "protobuf body does not start with the Kubernetes envelope prefix 'k8s\\x00'; send JSON instead"
        )
    try:
        api_version = kind = ""
        raw = b""
        encoding = ""
        for number, _, value in fields(body[len(MAGIC) :]):
            if number == 1:
                for inner, _, item in fields(_blob(value, "typeMeta")):
                    if inner == 1:
                        api_version = _text(item, "typeMeta.apiVersion")
                    elif inner == 2:
                        kind = _text(item, "typeMeta.kind")
            elif number == 2:
                raw = _blob(value, "raw")
            elif number == 3:
                encoding = _text(value, "contentEncoding")
        if encoding:
            raise errors.unsupported_media_type(
                f"protobuf body with contentEncoding {encoding!r} is not supported"
            )
        group = api_version.rpartition("/")[0]
        message = (
            "DeleteOptions"
            if kind == "DeleteOptions"
            else VERSIONED_KINDS.get((api_version, kind)) or KINDS.get((group, kind))
        )
        if message is None:
            raise errors.unsupported_media_type(
                f"cannot decode {api_version or '<no apiVersion>'} {kind or '<no kind>'} from protobuf: this server "
                f"decodes protobuf only for {', '.join(supported_kinds())}; send the object as JSON "
                "(Content-Type: application/json)"
            )
        obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
        obj.update(decode_message(message, raw, kind))
        return obj
    except _WireError as exc:
        raise errors.bad_request(f"malformed protobuf body: {exc}") from exc


def decode_json_equivalent(body: bytes, content_type: str | None) -> Mapping[str, Any] | None:
    """Convenience for the HTTP layer: the decoded object when ``content_type`` is protobuf, else None."""
    return decode(body) if is_protobuf(content_type) else None
