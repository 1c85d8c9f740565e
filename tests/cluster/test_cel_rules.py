"""CEL validation rules of custom resources (``x-kubernetes-validations``), with kubectl and the official client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException

from berth.cluster import cel_rules

from .conftest import Kubectl

SPEC_SCHEMA = {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.min <= self.max", "message": "min must not exceed max"},
        {
            "rule": "!has(self.mode) || self.mode == oldSelf.mode",
            "messageExpression": "'mode is immutable (was ' + oldSelf.mode + ')'",
            "reason": "FieldValueForbidden",
            "fieldPath": ".mode",
        },
        {"rule": "self.tags.all(t, t.lowerAscii() == t)", "message": "tags must be lower case"},
        {"rule": "self.name.startsWith('x-')"},
    ],
    "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "mode": {"type": "string"},
        "name": {"type": "string", "default": "x-default"},
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "replicas": {
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "replicas may only grow"}],
        },
    },
}

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "ranges.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "ranges", "singular": "range", "kind": "Range"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": SPEC_SCHEMA}}},
            }
        ],
    },
}


def _range(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Range", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def ranges(kubectl: Kubectl, k8s: Any) -> Any:
    kubectl.ok("apply", "-f", "-", input=json.dumps(CRD))
    kubectl.ok("wait", "--for=condition=Established", "crd/ranges.example.com", "--timeout=30s")
    return k8s_client.CustomObjectsApi(k8s)


def _create(api: Any, body: dict[str, Any]) -> Any:
    return api.create_namespaced_custom_object("example.com", "v1", "default", "ranges", body)


def _problem(exc: ApiException) -> dict[str, Any]:
    return dict(json.loads(exc.body))


def test_a_rule_refuses_what_it_says(ranges: Any, kubectl: Kubectl) -> None:
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(_range("r", {"min": 5, "max": 3})))
    assert refused.returncode != 0
    assert (
        'The Range "r" is invalid: spec: Invalid value: "object": min must not exceed max' in refused.stderr
    )
    with pytest.raises(ApiException) as err:
        _create(ranges, _range("t", {"min": 1, "max": 3, "tags": ["Big"], "name": "nope"}))
    status = _problem(err.value)
    assert err.value.status == 422
    assert [c["message"] for c in status["details"]["causes"]] == [
        'Invalid value: "object": tags must be lower case',
        "Invalid value: \"object\": failed rule: self.name.startsWith('x-')",
    ]
    created = _create(ranges, _range("ok", {"min": 1, "max": 3, "tags": ["a"]}))
    assert created["spec"]["name"] == "x-default"  # defaults come first, then the rules


def test_transition_rules_see_old_self(ranges: Any) -> None:
    _create(ranges, _range("m", {"min": 1, "max": 2, "mode": "fast", "replicas": 3}))
    with pytest.raises(ApiException) as err:
        ranges.patch_namespaced_custom_object(
            "example.com", "v1", "default", "ranges", "m", {"spec": {"mode": "slow", "replicas": 2}}
        )
    causes = {(c["field"], c["reason"], c["message"]) for c in _problem(err.value)["details"]["causes"]}
    assert causes == {
        ("spec.mode", "FieldValueForbidden", "Forbidden: mode is immutable (was fast)"),
        ("spec.replicas", "FieldValueInvalid", 'Invalid value: "integer": replicas may only grow'),
    }
    grown = ranges.patch_namespaced_custom_object(
        "example.com", "v1", "default", "ranges", "m", {"spec": {"replicas": 4}}
    )
    assert grown["spec"]["replicas"] == 4


def test_a_rule_that_does_not_compile_is_refused_with_the_crd(kubectl: Kubectl) -> None:
    crd = json.loads(json.dumps(CRD))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.min <="}]
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(crd))
    assert refused.returncode != 0
    assert (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value"
        in refused.stderr
    )
    assert "compilation failed" in refused.stderr


def test_an_expensive_rule_is_refused_not_run() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))", "message": "never"}
        ],
        "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
    }
    small = cel_rules.validate(schema, {"l": [1, 2, 3]}, None)
    assert small == []
    problems = cel_rules.validate(schema, {"l": list(range(500))}, None)
    assert [p.detail for p in problems] == [
        "call cost exceeds limit for rule: self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))"
    ]


def test_the_library_functions() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.s.upperAscii() == 'AB' && self.s.trim() == 'ab' && self.s.indexOf('b') == 1"},
            {"rule": "self.l.isSorted() && self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3"},
            {"rule": "'a,b'.split(',').join('-') == 'a-b' && 'aXa'.replace('X', 'b') == 'aba'"},
            {"rule": "self.s.matches('^a') && self.s.lastIndexOf('b') == 1"},
        ],
    }
    assert cel_rules.validate(schema, {"s": "ab", "l": [1, 2, 3]}, None) == []
    failed = cel_rules.validate(schema, {"s": "ab", "l": [3, 2, 1]}, None)
    assert [p.detail for p in failed] == [
        "failed rule: self.l.isSorted() && self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3"
    ]


LIBRARY_RULES = [
    # quantity
    ("quantity(self.limit).isGreaterThan(quantity(self.request))", True),
    ("quantity('1Gi').compareTo(quantity('1024Mi')) == 0 && quantity('2k').asInteger() == 2000", True),
    ("!quantity('1.5').isInteger() && quantity('1').add(quantity('500m')).isLessThan(quantity('2'))", True),
    ("isQuantity(self.limit) && !isQuantity('two gigs') && quantity('-1').sign() == -1", True),
    ("quantity(self.request).isGreaterThan(quantity(self.limit))", False),
    # URL
    ("url(self.endpoint).getScheme() == 'https' && url(self.endpoint).getPort() == '8443'", True),
    (
        "url(self.endpoint).getHostname() == 'api.example.com' && url(self.endpoint).getEscapedPath() == '/v1'",
        True,
    ),
    ("url(self.endpoint).getQuery()['x'] == ['1', '2'] && !isURL('not a url')", True),
    # IP and CIDR
    ("isIP(self.address) && ip(self.address).family() == 4 && !isIP('10.0.0.300')", True),
    ("cidr(self.subnet).containsIP(self.address) && cidr(self.subnet).prefixLength() == 8", True),
    ("cidr(self.subnet).containsCIDR('10.1.0.0/16') && !cidr(self.subnet).containsIP(ip('11.0.0.1'))", True),
    (
        "string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8' && string(cidr('10.1.2.3/8').ip()) == '10.1.2.3'",
        True,
    ),
    ("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1') && ip('127.0.0.1').isLoopback()", True),
    ("ip(self.address).isGlobalUnicast() && !ip('0.0.0.0').isGlobalUnicast() && string(1) == '1'", True),
]


@pytest.mark.parametrize(("rule", "holds"), LIBRARY_RULES, ids=[r for r, _ in LIBRARY_RULES])
def test_the_quantity_url_and_ip_libraries(rule: str, holds: bool) -> None:
    """The Kubernetes CEL libraries CRDs use for resources, endpoints and networks, with upstream's semantics."""
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": rule}]}
    value = {
        "limit": "2Gi",
        "request": "1500Mi",
        "endpoint": "https://api.example.com:8443/v1?x=1&x=2",
        "address": "10.1.2.3",
        "subnet": "10.0.0.0/8",
    }
    assert (cel_rules.validate(schema, value, None) == []) is holds


def test_a_library_value_that_does_not_parse_fails_the_rule_with_the_cause() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": "quantity(self.q).isInteger()"}]}
    problems = cel_rules.validate(schema, {"q": "two gigs"}, None)
    assert len(problems) == 1 and "is not a quantity" in problems[0].detail
