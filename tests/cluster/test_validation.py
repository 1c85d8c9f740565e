"""Admission validation: upstream's 422 wording, every problem with its field path, CR pruning and defaulting."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cluster import errors, schema, validation

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


def errors_of(obj: dict[str, Any], namespaced: bool | None = None) -> list[str]:
    return validation.field_errors_text(validation.validate_object(obj, namespaced))


def test_bad_pod_name_is_a_422_with_upstream_message() -> None:
    obj = pod("Bad_Name")
    with pytest.raises(errors.ApiError) as exc:
        validation.raise_if_invalid(obj, validation.validate_object(obj))
    err = exc.value
    assert err.code == 422 and err.reason == "Invalid"
    assert (
        err.message == f'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}'
    )
    assert err.status()["details"] == {
        "name": "Bad_Name",
        "kind": "Pod",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": f'Invalid value: "Bad_Name": {SUBDOMAIN_MSG}',
                "field": "metadata.name",
            }
        ],
    }


@pytest.mark.parametrize(
    ("kind", "api_version", "name", "expected"),
    [
        ("ConfigMap", "v1", "my.config-1", []),
        ("ConfigMap", "v1", "x" * 254, ["must be no more than 253 characters"]),
        ("Namespace", "v1", "a.b", [LABEL_MSG]),
        ("Namespace", "v1", "team-a", []),
        ("Service", "v1", "1svc", [DNS1035_MSG]),
        ("Service", "v1", "svc-1", []),
        ("ClusterRole", "rbac.authorization.k8s.io/v1", "system:controller:x", []),
        ("ClusterRole", "rbac.authorization.k8s.io/v1", "a/b", ["may not contain '/'"]),
        ("Role", "rbac.authorization.k8s.io/v1", "..", ["may not be '..'"]),
    ],
    ids=[
        "subdomain-ok",
        "subdomain-too-long",
        "namespace-label",
        "namespace-ok",
        "service-dns1035",
        "service-ok",
        "rbac-colons-ok",
        "rbac-slash",
        "rbac-dotdot",
    ],
)
def test_name_rules_per_kind(kind: str, api_version: str, name: str, expected: list[str]) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}
    problems = [p for p in validation.validate_metadata(obj) if p.field == "metadata.name"]
    assert [p.detail for p in problems] == expected


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        pytest.param({}, ["metadata.name: Required value: name or generateName is required"], id="no-name"),
        pytest.param({"generateName": "web-"}, [], id="generate-name-trailing-dash"),
        pytest.param(
            {"generateName": "Web-"},
            [f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_MSG}'],
            id="bad-generate-name",
        ),
        pytest.param({"name": "x", "labels": {"app": "web", "example.com/tier": "a"}}, [], id="good-labels"),
        pytest.param(
            {"name": "x", "labels": {"app": "-bad"}},
            [
                'metadata.labels[app]: Invalid value: "-bad": a valid label must be an empty string or consist '
                "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
            id="bad-label-value",
        ),
        pytest.param({"name": "x", "labels": {"a/b/c": "v"}}, 1, id="bad-label-key"),
        pytest.param({"name": "x", "namespace": "Bad"}, 1, id="bad-namespace"),
    ],
)
def test_metadata(meta: dict[str, Any], expected: list[str] | int) -> None:
    problems = validation.field_errors_text(
        validation.validate_metadata({"kind": "ConfigMap", "metadata": meta})
    )
    if isinstance(expected, int):
        assert len(problems) == expected
    else:
        assert problems == expected


def test_namespace_scope_checks() -> None:
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}}
    assert errors_of(cm, namespaced=True) == ["metadata.namespace: Required value"]
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n", "namespace": "default"}}
    assert errors_of(node, namespaced=False) == []  # the server clears it, as upstream


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(pod(), [], id="pod-ok"),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
            ["spec.containers: Required value"],
            id="pod-no-containers",
        ),
        pytest.param(
            pod(containers=[{"name": "c"}, {"name": "c", "image": "i"}]),
            ["spec.containers[0].image: Required value", 'spec.containers[1].name: Duplicate value: "c"'],
            id="pod-missing-image-and-duplicate",
        ),
        pytest.param(
            pod(containers=[{"name": "c", "image": "i", "ports": [{"name": "http"}]}]),
            ["spec.containers[0].ports[0].containerPort: Required value"],
            id="pod-port-required",
        ),
        pytest.param(
            pod(containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 70000}]}]),
            [
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, "
                "inclusive"
            ],
            id="pod-port-range",
        ),
        pytest.param(
            pod(restartPolicy="Sometimes"),
            [
                'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", '
                '"Never"'
            ],
            id="pod-restart-policy",
        ),
    ],
)
def test_pod_rules(obj: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(obj) == expected


def deployment(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
    }
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": base}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(deployment(), [], id="ok"),
        pytest.param(deployment(selector=None), ["spec.selector: Required value"], id="no-selector"),
        pytest.param(
            deployment(selector={"matchLabels": {"app": "other"}}),
            [
                'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template '
                "`labels`"
            ],
            id="selector-mismatch",
        ),
        pytest.param(
            deployment(replicas=-1),
            ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
            id="negative-replicas",
        ),
        pytest.param(
            deployment(strategy={"type": "Blue"}),
            ['spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"'],
            id="strategy",
        ),
        pytest.param(
            deployment(
                template={
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"},
                }
            ),
            ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
            id="restart-policy-always-only",
        ),
    ],
)
def test_deployment_rules(obj: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(obj) == expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}
                    }
                },
            },
            [],
            id="job-ok",
        ),
        pytest.param(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always"}
                    }
                },
            },
            [
                'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'
            ],
            id="job-always",
        ),
        pytest.param(
            {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {}},
            ["spec.schedule: Required value", "spec.jobTemplate.spec: Required value"],
            id="cronjob-empty",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {}},
            ["spec.ports: Required value"],
            id="service-no-ports",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s"},
                "spec": {"clusterIP": "None", "selector": {"a": "b"}},
            },
            [],
            id="headless-service",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s"},
                "spec": {"ports": [{"port": 80}, {"port": 81, "name": "b"}]},
            },
            ["spec.ports[0].name: Required value"],
            id="service-multi-port-names",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"bad key": "v"}},
            [
                'data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric '
                "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                "validation is '[-._a-zA-Z0-9]+')"
            ],
            id="configmap-key",
        ),
        pytest.param(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "b"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
            },
            [
                'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
                "subjects[0].namespace: Required value",
            ],
            id="crb-role-ref",
        ),
    ],
)
def test_other_kinds(obj: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(obj) == expected


def crd(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "group": "example.com",
        "names": {"plural": "widgets", "kind": "Widget"},
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True}],
    }
    base.update(spec)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": base,
    }


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(crd(), [], id="ok"),
        pytest.param(
            crd(group="example"),
            [
                'spec.group: Invalid value: "example": should be a domain with at least one dot',
                'metadata.name: Invalid value: "widgets.example.com": must be '
                'spec.names.plural+"."+spec.group',
            ],
            id="group-without-dot",
        ),
        pytest.param(
            crd(scope="Global"),
            ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
            id="scope",
        ),
        pytest.param(
            crd(versions=[{"name": "v1", "storage": True}, {"name": "v2", "storage": True}]),
            [
                'spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage '
                "version"
            ],
            id="two-storage-versions",
        ),
    ],
)
def test_crd_rules(obj: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(obj) == expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "x", "labels": {"a": "b"}},
                "spec": {
                    "replicass": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "c", "imagee": "x", "resources": {"limits": {"cpu": "1"}}}
                            ]
                        }
                    },
                },
            },
            ["spec.replicass", "spec.template.spec.containers[0].imagee"],
            id="deployment-typos",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"any": "key"}},
            [],
            id="map-keys-are-free",
        ),
        pytest.param(
            {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": 1}}, [], id="unknown-kind"
        ),
    ],
)
def test_unknown_fields(obj: dict[str, Any], expected: list[str]) -> None:
    assert validation.unknown_fields(obj) == expected


def test_strict_decoding_error() -> None:
    err = validation.strict_decoding_error(validation.strict_problems(["spec.x", "spec.y"]))
    assert err.code == 400
    assert err.message == 'strict decoding error: unknown field "spec.x", unknown field "spec.y"'


WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 5},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                    "maxItems": 3,
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"depth": {"type": "integer", "default": 2}},
                },
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def widget(spec: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec, **top}


def test_custom_resource_is_pruned_and_defaulted() -> None:
    obj = widget(
        {"size": 2, "junk": True, "extra": {"anything": {"goes": 1}}, "labels": {"a": "b"}},
        status={"ready": True, "leftover": 1},
        unknownTop=1,
    )
    stored, problems = validation.admit_custom_resource(obj, WIDGET_SCHEMA)
    assert problems == []
    assert stored == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {
            "size": 2,
            "extra": {"anything": {"goes": 1}},
            "labels": {"a": "b"},
            "mode": "fast",
            "nested": {"depth": 2},
        },
        "status": {"ready": True},
    }
    assert obj["spec"]["junk"] is True  # input untouched


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, ["spec.size: Required value"], id="required"),
        pytest.param(
            {"size": "big"},
            ['spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"'],
            id="type",
        ),
        pytest.param(
            {"size": 9},
            ["spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5"],
            id="maximum",
        ),
        pytest.param(
            {"size": 0},
            ["spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"],
            id="minimum",
        ),
        pytest.param(
            {"size": 1, "mode": "warp"},
            ['spec.mode: Unsupported value: "warp": supported values: "fast", "slow"'],
            id="enum",
        ),
        pytest.param(
            {"size": 1, "name": "abcdefg"},
            ["spec.name: Too long: may not be more than 5 bytes"],
            id="max-length",
        ),
        pytest.param(
            {"size": 1, "name": "AB"},
            ["spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"],
            id="pattern",
        ),
        pytest.param({"size": 1, "port": 80}, [], id="int-or-string-int"),
        pytest.param({"size": 1, "port": "http"}, [], id="int-or-string-string"),
        pytest.param(
            {"size": 1, "port": True},
            [
                'spec.port: Invalid value: "boolean": spec.port in body must be of type '
                'integer,string: "boolean"'
            ],
            id="int-or-string-bad",
        ),
        pytest.param(
            {"size": 1, "tags": ["a", "a"]}, ['spec.tags[1]: Duplicate value: "a"'], id="set-duplicate"
        ),
        pytest.param(
            {"size": 1, "tags": ["a", "b", "c", "d"]},
            ["spec.tags: Too many: 4: must have at most 3 items"],
            id="max-items",
        ),
        pytest.param(
            {"size": 1, "labels": {"a": 1}},
            [
                'spec.labels.a: Invalid value: "integer": spec.labels.a in body '
                'must be of type string: "integer"'
            ],
            id="additional-properties",
        ),
    ],
)
def test_custom_resource_validation(spec: dict[str, Any], expected: list[str]) -> None:
    _, problems = validation.admit_custom_resource(widget(spec), WIDGET_SCHEMA)
    assert validation.field_errors_text(problems) == expected


def test_custom_resource_422_names_kind_and_group() -> None:
    obj = widget({"size": "big"})
    _, problems = validation.admit_custom_resource(obj, WIDGET_SCHEMA)
    with pytest.raises(errors.ApiError) as exc:
        validation.raise_if_invalid(obj, problems)
    assert exc.value.message.startswith(
        'Widget.example.com "w" is invalid: spec.size: Invalid value: "string"'
    )
    assert exc.value.status()["details"]["group"] == "example.com"


def test_custom_resource_without_schema_only_checks_metadata() -> None:
    stored, problems = validation.admit_custom_resource(
        widget({"anything": 1}, metadata={"name": "Bad"}), None
    )
    assert stored["spec"] == {"anything": 1}
    assert [p.field for p in problems] == ["metadata.name"]


def test_list_map_keys_must_be_unique() -> None:
    s = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port"],
                        "items": {"type": "object", "properties": {"port": {"type": "integer"}}},
                    }
                },
            }
        },
    }
    _, problems = validation.admit_custom_resource(widget({"ports": [{"port": 1}, {"port": 1}]}), s)
    assert validation.field_errors_text(problems) == ['spec.ports[1]: Duplicate value: {"port":1}']


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "x"},
                "spec": {"replicas": "2"},
            },
            'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into '
            "Go struct field DeploymentSpec.spec.replicas of type int32",
            id="string-for-int32",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "x"},
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": 5}]}}},
            },
            'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number into '
            "Go struct field Container.spec.template.spec.containers.image of type string",
            id="in-list-item",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "x"},
                "spec": {"containers": {"name": "c"}},
            },
            'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal object into Go struct field '
            "PodSpec.spec.containers of type []v1.Container",
            id="object-for-list",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "data": {"a": "no base64!"}},
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2',
            id="bad-base64",
        ),
    ],
)
def test_decode_errors(obj: dict[str, Any], message: str) -> None:
    err = validation.decode_error(obj)
    assert err is not None and err.code == 400 and err.reason == "BadRequest"
    assert err.message == message


@pytest.mark.parametrize(
    "obj",
    [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {
                "replicas": 2,
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                "template": {
                    "spec": {
                        "containers": [{"name": "c", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}],
                        "nodeSelector": None,
                    }
                },
            },
        },
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "data": {"a": "aGk="}},
        {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"replicas": "any"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {"replicas": 2.0}},
    ],
    ids=["int-or-string-and-quantities", "valid-base64", "custom-resource", "integral-float"],
)
def test_no_decode_error(obj: dict[str, Any]) -> None:
    assert validation.decode_error(obj) is None


def test_nulls_of_non_nullable_fields_are_dropped_then_defaulted() -> None:
    s = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "default": "fast"},
                    "note": {"type": "string"},
                    "maybe": {"type": "string", "nullable": True},
                },
            }
        },
    }
    stored, problems = validation.admit_custom_resource(
        widget({"mode": None, "note": None, "maybe": None}), s
    )
    assert problems == []
    assert stored["spec"] == {"mode": "fast", "maybe": None}


def _sample(node: Any, depth: int) -> Any:
    """A value of the right shape for ``node`` (every declared field, up to ``depth``)."""
    if node.int_or_string:
        return 1
    options = node.schema.get("oneOf")
    if options:
        return _sample(node.sub(options[0]), depth)
    types = node.types - {"null"}
    if node.is_struct:
        return {k: _sample(node.field(k), depth - 1) for k in node.properties} if depth > 0 else {}
    if "object" in types or node.is_map:
        return {"k": _sample(node.field("k"), depth - 1)} if depth > 0 else {}
    if "array" in types:
        return [_sample(node.items(), depth - 1)] if depth > 0 else []
    if "integer" in types:
        return 1
    if "number" in types:
        return 1.5
    if "boolean" in types:
        return True
    if "string" in types:
        return "eA==" if node.is_bytes else "x"
    return {"free": [1, "a"]}


def test_objects_shaped_by_the_schema_pass_strict_and_decode_checks() -> None:
    table = schema.builtin()
    checked = 0
    for group, version, kind in table.kinds():
        if kind.endswith("List") or kind in ("Status", "WatchEvent", "DeleteOptions"):
            continue
        api_version = f"{group}/{version}" if group else version
        node = table.for_kind(api_version, kind)
        assert node is not None
        obj = _sample(node, 6)
        obj.update(apiVersion=api_version, kind=kind)
        assert validation.unknown_fields(obj) == [], kind
        assert validation.decode_error(obj) is None, kind
        checked += 1
    assert checked > 80
