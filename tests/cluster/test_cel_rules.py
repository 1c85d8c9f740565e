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


STOPPED = "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: "


@pytest.mark.parametrize(
    "rule",
    [
        "self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))",  # nested comprehensions
        "self.l.all(x, (self.l + self.l).size() > 0)",  # a body that copies the list each time
        "self.l.all(x, x in self.l)",  # a body that searches the list each time
        "self.l.map(x, self.l.filter(y, y == x)).size() >= 0 || true",  # stopped even where || would absorb
    ],
)
def test_a_rule_that_would_run_too_long_is_stopped_by_its_meter(rule: str) -> None:
    """The meter counts what a rule does as it runs (nodes evaluated, sizes of the values calls make and operators
    walk), so work hidden inside a comprehension's body counts too; a small input runs as usual."""
    schema = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": rule}, {"rule": "false", "message": "not reached"}],
        "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
    }
    small = cel_rules.validate(schema, {"l": [1, 2, 3]}, None)
    assert [p.detail for p in small] == ["not reached"]
    problems = cel_rules.validate(schema, {"l": list(range(3000))}, None)
    assert [p.detail for p in problems] == [STOPPED + rule]  # and no further rule ran


def test_rules_that_together_use_the_objects_budget_stop_the_rest() -> None:
    rule = {"rule": "(self.l + self.l).size() > 0", "message": "ok"}  # each run makes a list twice as long
    schema = {"type": "object", "x-kubernetes-validations": [rule] * 6}
    problems = cel_rules.validate(schema, {"l": list(range(30_000))}, None)
    assert [p.detail for p in problems] == [
        "validation failed due to running out of cost budget, no further validation rules will be run"
    ]
    assert cel_rules.validate(schema, {"l": list(range(30))}, None) == []


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


def _with_spec_property(name: str, prop: dict[str, Any]) -> dict[str, Any]:
    crd = json.loads(json.dumps(CRD))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][name] = prop
    return crd


def test_list_map_items_meet_their_old_selves_by_key_not_by_position(kubectl: Kubectl, k8s: Any) -> None:
    """Upstream correlates the items of an ``x-kubernetes-list-type: map`` list by their list-map keys: an item's
    transition rule sees the old item with the same key wherever it moved, and a new item has no old self."""
    ports = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.port >= oldSelf.port", "message": "a port may only grow"}
            ],
        },
    }
    kubectl.ok("apply", "-f", "-", input=json.dumps(_with_spec_property("ports", ports)))
    kubectl.ok("wait", "--for=condition=Established", "crd/ranges.example.com", "--timeout=30s")
    api = k8s_client.CustomObjectsApi(k8s)
    spec = {"min": 1, "max": 2, "ports": [{"name": "a", "port": 10}, {"name": "b", "port": 20}]}
    _create(api, _range("p", spec))
    # reordered, a grown, c new (smaller than what sat at its position before): every rule holds
    moved = [{"name": "b", "port": 20}, {"name": "a", "port": 11}, {"name": "c", "port": 1}]
    api.patch_namespaced_custom_object(
        "example.com", "v1", "default", "ranges", "p", {"spec": {"ports": moved}}
    )
    shrunk = [{"name": "a", "port": 11}, {"name": "b", "port": 5}, {"name": "c", "port": 1}]
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_custom_object(
            "example.com", "v1", "default", "ranges", "p", {"spec": {"ports": shrunk}}
        )
    assert [(c["field"], c["message"]) for c in _problem(err.value)["details"]["causes"]] == [
        ("spec.ports[1]", 'Invalid value: "object": a port may only grow')
    ]


def test_a_transition_rule_where_old_values_cannot_be_correlated_is_refused_with_the_crd(
    kubectl: Kubectl,
) -> None:
    atomic = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"port": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.port >= oldSelf.port"}],
        },
    }
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(_with_spec_property("ports", atomic)))
    assert refused.returncode != 0
    assert (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[ports].items.x-kubernetes-validations[0]"
        '.rule: Invalid value: "self.port >= oldSelf.port": oldSelf cannot be used on the uncorrelatable portion of '
        "the schema within spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[ports]"
    ) in refused.stderr
    under_atomic_map = {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {"n": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}},
    }
    refused = kubectl.run(
        "apply", "-f", "-", input=json.dumps(_with_spec_property("frozen", under_atomic_map))
    )
    assert refused.returncode != 0
    assert (
        "uncorrelatable portion of the schema within spec.versions[0].schema.openAPIV3Schema."
        in refused.stderr
    )
    plain = {
        "type": "array",
        "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]},
    }
    kubectl.ok("apply", "-f", "-", input=json.dumps(_with_spec_property("counts", plain)))


FORMAT_AND_REGEX_RULES = [
    ("!format.dns1123Label().validate(self.label).hasValue()", True),
    ("!format.named('dns1123Subdomain').value().validate('apiextensions.k8s.io').hasValue()", True),
    (
        "format.dns1035Label().validate('1abc').hasValue() && !format.dns1035LabelPrefix().validate('abc-').hasValue()",
        True,
    ),
    ("!format.qualifiedName().validate('example.com/v1beta1').hasValue()", True),
    ("format.labelValue().validate('-bad').hasValue() && !format.labelValue().validate('').hasValue()", True),
    (
        "!format.uri().validate('https://example.com/x').hasValue() && format.uri().validate('x y').hasValue()",
        True,
    ),
    ("!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", True),
    ("format.byte().validate('not base64!').value() == ['invalid base64']", True),
    (
        "!format.date().validate('2026-12-02').hasValue() && format.date().validate('2026-13-02').hasValue()",
        True,
    ),
    ("!format.datetime().validate('2026-12-02T07:00:00Z').hasValue()", True),
    ("!format.named('noSuchFormat').hasValue() && optional.none().orValue('x') == 'x'", True),
    ("format.dns1123Label().validate(self.bad).hasValue()", True),
    ("self.version.find('[0-9]+') == '12' && self.version.find('z+') == ''", True),
    ("self.version.findAll('[0-9]+') == ['12', '3'] && self.version.findAll('[0-9]+', 1) == ['12']", True),
    ("!format.dns1123Label().validate(self.bad).hasValue()", False),
]


@pytest.mark.parametrize(
    ("rule", "holds"), FORMAT_AND_REGEX_RULES, ids=[r for r, _ in FORMAT_AND_REGEX_RULES]
)
def test_the_format_and_regex_libraries(rule: str, holds: bool) -> None:
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": rule}]}
    value = {"label": "my-label", "bad": "Not_A_Label", "version": "v12.3"}
    assert (cel_rules.validate(schema, value, None) == []) is holds


def test_a_format_rule_reports_upstreams_name_messages_through_kubectl(kubectl: Kubectl) -> None:
    crd = _with_spec_property("host", {"type": "string"})
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [
        {
            "rule": "!format.dns1123Label().validate(self.host).hasValue()",
            "messageExpression": "format.dns1123Label().validate(self.host).value().join(', ')",
        }
    ]
    kubectl.ok("apply", "-f", "-", input=json.dumps(crd))
    kubectl.ok("wait", "--for=condition=Established", "crd/ranges.example.com", "--timeout=30s")
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(_range("h", {"host": "Web_1"})))
    assert refused.returncode != 0
    assert (
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and"
        " end with an alphanumeric character"
    ) in refused.stderr
    kubectl.ok("apply", "-f", "-", input=json.dumps(_range("h", {"host": "web-1"})))


def test_a_backtracking_regex_cannot_hang_the_server(kubectl: Kubectl, k8s: Any) -> None:
    """``matches``, ``find`` and ``findAll`` run on RE2 as upstream: a pattern that makes a backtracking engine
    take exponential time answers at once (a hang would time the test out)."""
    crd = _with_spec_property("text", {"type": "string"})
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "!self.text.matches('^(a+)+$') && self.text.findAll('(a|aa)+b').size() == 0"}]
    kubectl.ok("apply", "-f", "-", input=json.dumps(crd))
    kubectl.ok("wait", "--for=condition=Established", "crd/ranges.example.com", "--timeout=30s")
    api = k8s_client.CustomObjectsApi(k8s)
    created = _create(api, _range("re", {"text": "a" * 50_000 + "!"}))
    assert created["spec"]["text"].endswith("!")


def test_the_client_gets_upstreams_422_when_a_rule_runs_out_of_cost(kubectl: Kubectl, k8s: Any) -> None:
    crd = _with_spec_property("nums", {"type": "array", "items": {"type": "integer"}})
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.nums.all(x, x in self.nums)", "message": "every number is there"}]
    kubectl.ok("apply", "-f", "-", input=json.dumps(crd))
    kubectl.ok("wait", "--for=condition=Established", "crd/ranges.example.com", "--timeout=30s")
    api = k8s_client.CustomObjectsApi(k8s)
    _create(api, _range("few", {"nums": [1, 2, 3]}))
    with pytest.raises(ApiException) as err:
        _create(api, _range("many", {"nums": list(range(5000))}))
    assert err.value.status == 422
    assert [c["message"] for c in _problem(err.value)["details"]["causes"]] == [
        'Invalid value: "object": ' + STOPPED + "every number is there"
    ]


def test_optional_old_self_runs_on_creates_too_with_old_self_an_optional(kubectl: Kubectl, k8s: Any) -> None:
    crd = _with_spec_property("level", {"type": "integer"})
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [
        {
            "rule": "oldSelf.hasValue() ? self.level >= oldSelf.value().level : self.level == 1",
            "optionalOldSelf": True,
            "message": "start at 1, then only go up",
        }
    ]
    kubectl.ok("apply", "-f", "-", input=json.dumps(crd))
    kubectl.ok("wait", "--for=condition=Established", "crd/ranges.example.com", "--timeout=30s")
    api = k8s_client.CustomObjectsApi(k8s)
    with pytest.raises(ApiException) as err:
        _create(api, _range("lv", {"level": 2}))
    assert "start at 1, then only go up" in _problem(err.value)["message"]
    _create(api, _range("lv", {"level": 1}))
    api.patch_namespaced_custom_object("example.com", "v1", "default", "ranges", "lv", {"spec": {"level": 3}})
    with pytest.raises(ApiException):
        api.patch_namespaced_custom_object(
            "example.com", "v1", "default", "ranges", "lv", {"spec": {"level": 2}}
        )
    unused = json.loads(json.dumps(crd))
    unused["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.level > 0", "optionalOldSelf": True}]
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(unused))
    assert refused.returncode != 0
    assert (
        "x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"
        in refused.stderr
    )
