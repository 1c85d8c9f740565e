"""Protobuf request bodies: real kubectl 1.35.2 captures and hand-built messages decode to the JSON clients mean.

The fixtures under fixtures/protobuf/ are request bodies kubectl 1.35.2 sent to a recording HTTP server
(`kubectl create configmap cm1 --from-literal=a=b --from-literal=c=d -n ns1`, `kubectl create token sa1
--duration=1h --audience=aud1`, `kubectl auth can-i create pods -n ns1`, ...); each .json beside a .bin is the
decoded object, reviewed by hand against `kubectl create ... --dry-run=client -o json`. The helm-* fixtures are
what Helm 4.1.4 sent for `helm install rel ./chart` (release Secret create and update) and `helm uninstall rel`
(DeleteOptions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import errors, protobuf

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"


# -- a tiny encoder for hand-built messages --------------------------------------------------------------------


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def vfield(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def lfield(number: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = lfield(1, api_version) + lfield(2, kind)
    return protobuf.MAGIC + lfield(1, type_meta) + lfield(2, raw) + lfield(3, "") + lfield(4, "")


def meta(name: str, **extra: bytes) -> bytes:
    return lfield(1, lfield(1, name) + lfield(2, "") + lfield(3, "") + b"".join(extra.values()))


# -- captured bodies -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.bin")))
def test_captured_kubectl_bodies_decode(name: str) -> None:
    body = (FIXTURES / f"{name}.bin").read_bytes()
    expected = json.loads((FIXTURES / f"{name}.json").read_text())
    assert protobuf.decode(body) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "configmap",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cm1", "namespace": "ns1"},
                "data": {"a": "b", "c": "d"},
            },
        ),
        (
            "secret-generic",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s1"},
                "data": {"pw": "aHVudGVyMg=="},
                "type": "Opaque",
            },
        ),
        (
            "tokenrequest",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"audiences": ["aud1"], "expirationSeconds": 3600},
            },
        ),
        (
            "ssar-get-pods-log",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": {
                    "resourceAttributes": {
                        "namespace": "ns1",
                        "verb": "get",
                        "resource": "pods",
                        "subresource": "log",
                    }
                },
            },
        ),
        (
            "ssar-nonresource",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
            },
        ),
        (
            "ssrr",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectRulesReview",
                "spec": {"namespace": "ns1"},
            },
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_key_captures_match_the_json_kubectl_means(name: str, expected: dict[str, Any]) -> None:
    assert protobuf.decode((FIXTURES / f"{name}.bin").read_bytes()) == expected


def test_deployment_capture_keeps_the_fields_the_generator_sets() -> None:
    obj = protobuf.decode((FIXTURES / "deployment.bin").read_bytes())
    assert obj["spec"]["replicas"] == 2
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert obj["spec"]["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:1", "ports": [{"containerPort": 80}]}
    ]


def test_role_capture_keeps_the_empty_core_group() -> None:
    obj = protobuf.decode((FIXTURES / "role.bin").read_bytes())
    assert obj["rules"][0]["apiGroups"] == [""]
    assert obj["rules"][1]["apiGroups"] == ["apps"]


# -- hand-built bodies -----------------------------------------------------------------------------------------


def test_delete_options_keep_zero_grace_period_and_policy() -> None:
    raw = (
        vfield(1, 0)
        + lfield(4, "Foreground")
        + lfield(5, "All")
        + lfield(2, lfield(1, "u-1") + lfield(2, "7"))
    )
    assert protobuf.decode(envelope("v1", "DeleteOptions", raw)) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
        "preconditions": {"uid": "u-1", "resourceVersion": "7"},
    }


def test_helm_release_secret_capture() -> None:
    obj = protobuf.decode((FIXTURES / "helm-release-secret-create.bin").read_bytes())
    assert obj["metadata"]["name"] == "sh.helm.release.v1.rel.v1"
    assert (
        obj["metadata"]["labels"]["owner"] == "helm"
        and obj["metadata"]["labels"]["status"] == "pending-install"
    )
    assert obj["type"] == "helm.sh/release.v1"
    assert set(obj["data"]) == {"release"}
    assert protobuf.decode((FIXTURES / "helm-uninstall-delete-options.bin").read_bytes()) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
    }


def test_helm_style_release_secret() -> None:
    labels = lfield(11, lfield(1, "owner") + lfield(2, "helm")) + lfield(
        11, lfield(1, "name") + lfield(2, "r")
    )
    raw = (
        meta("sh.helm.release.v1.r.v1", labels=labels)
        + lfield(2, lfield(1, "release") + lfield(2, b"\x00\xff"))
        + lfield(3, "helm.sh/release.v1")
    )
    obj = protobuf.decode(envelope("v1", "Secret", raw))
    assert obj["metadata"] == {"name": "sh.helm.release.v1.r.v1", "labels": {"owner": "helm", "name": "r"}}
    assert obj["data"] == {"release": "AP8="}
    assert obj["type"] == "helm.sh/release.v1"


def test_pointer_fields_keep_zero_and_empty_messages() -> None:
    volume = lfield(1, "scratch") + lfield(2, lfield(2, b""))  # emptyDir: {}
    pod_spec = lfield(1, volume) + vfield(4, 0) + lfield(2, lfield(1, "c") + lfield(2, "i"))
    template = lfield(2, pod_spec)
    spec = vfield(1, 0) + lfield(3, template) + vfield(5, 0)  # replicas 0 kept; minReadySeconds 0 dropped
    obj = protobuf.decode(envelope("apps/v1", "Deployment", meta("d") + lfield(2, spec)))
    assert obj["spec"] == {
        "replicas": 0,
        "template": {
            "spec": {
                "volumes": [{"name": "scratch", "emptyDir": {}}],
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "c", "image": "i"}],
            }
        },
    }


def test_negative_ints_and_times_and_int_or_string() -> None:
    owner = lfield(1, "ReplicaSet") + lfield(3, "rs") + lfield(4, "u") + lfield(5, "apps/v1") + vfield(6, 1)
    time = lfield(8, vfield(1, 1_700_000_000))
    raw = meta("p", owner=lfield(13, owner), time=time)
    strategy = lfield(4, lfield(1, "RollingUpdate") + lfield(2, lfield(1, vfield(1, 1) + lfield(3, "25%"))))
    raw += lfield(2, strategy + vfield(6, -1))
    obj = protobuf.decode(envelope("apps/v1", "Deployment", raw))
    assert obj["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    assert obj["metadata"]["ownerReferences"] == [
        {"kind": "ReplicaSet", "name": "rs", "uid": "u", "apiVersion": "apps/v1", "controller": True}
    ]
    assert obj["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}}
    assert obj["spec"]["revisionHistoryLimit"] == -1


def test_unknown_field_numbers_are_skipped() -> None:
    raw = meta("cm") + lfield(99, "future") + vfield(98, 5)
    assert protobuf.decode(envelope("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm"},
    }


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        pytest.param(b'{"kind": "ConfigMap"}', 400, "envelope prefix", id="json-sent-as-protobuf"),
        pytest.param(protobuf.MAGIC + b"\x0a\x05ab", 400, "truncated", id="truncated"),
        pytest.param(
            envelope("v1", "Pod", meta("p")), 415, "cannot decode v1 Pod from protobuf", id="unknown-kind"
        ),
        pytest.param(
            envelope("example.com/v1", "Widget", b""), 415, "send the object as JSON", id="custom-resource"
        ),
        pytest.param(protobuf.MAGIC + b"\x0f", 400, "unsupported wire type", id="bad-wire-type"),
    ],
)
def test_bad_bodies(body: bytes, code: int, fragment: str) -> None:
    with pytest.raises(errors.ApiError) as exc:
        protobuf.decode(body)
    assert exc.value.code == code
    assert fragment in exc.value.message


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/vnd.kubernetes.protobuf", True),
        ("application/vnd.kubernetes.protobuf; charset=utf-8", True),
        ("application/json", False),
        (None, False),
    ],
    ids=["plain", "with-params", "json", "missing"],
)
def test_is_protobuf(content_type: str | None, expected: bool) -> None:
    assert protobuf.is_protobuf(content_type) is expected


def micro_time(seconds: int, nanos: int) -> bytes:
    return vfield(1, seconds) + vfield(2, nanos)


def test_go_scheduler_bodies_binding_lease_event_eviction() -> None:
    binding = meta("web-1") + lfield(2, lfield(1, "Node") + lfield(3, "node-2"))
    assert protobuf.decode(envelope("v1", "Binding", binding)) == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web-1"},
        "target": {"kind": "Node", "name": "node-2"},
    }
    lease_spec = (
        lfield(1, "sched-a")
        + vfield(2, 15)
        + lfield(4, micro_time(1_700_000_000, 123_456_000))
        + vfield(5, 0)
    )
    lease = protobuf.decode(
        envelope("coordination.k8s.io/v1", "Lease", meta("kube-scheduler") + lfield(2, lease_spec))
    )
    assert lease["spec"] == {
        "holderIdentity": "sched-a",
        "leaseDurationSeconds": 15,
        "renewTime": "2023-11-14T22:13:20.123456Z",
        "leaseTransitions": 0,
    }
    event = (
        meta("web-1.17")
        + lfield(2, micro_time(1_700_000_000, 0))
        + lfield(4, "default-scheduler")
        + lfield(7, "Scheduled")
        + lfield(8, lfield(1, "Pod") + lfield(3, "web-1"))
        + lfield(10, "Assigned")
        + lfield(11, "Normal")
    )
    assert protobuf.decode(envelope("events.k8s.io/v1", "Event", event)) == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web-1.17"},
        "eventTime": "2023-11-14T22:13:20.000000Z",
        "reportingController": "default-scheduler",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "name": "web-1"},
        "note": "Assigned",
        "type": "Normal",
    }
    core_event = meta("e") + lfield(3, "Started") + lfield(5, lfield(1, "kubelet")) + vfield(8, 2)
    assert protobuf.decode(envelope("v1", "Event", core_event))["source"] == {"component": "kubelet"}
    eviction = meta("web-1") + lfield(2, vfield(1, 0))
    assert protobuf.decode(envelope("policy/v1", "Eviction", eviction))["deleteOptions"] == {
        "gracePeriodSeconds": 0
    }
