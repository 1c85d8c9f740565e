"""The Status bodies and messages of berth.cluster.errors match upstream's wording."""

from __future__ import annotations

import pytest

from berth.cluster import errors


@pytest.mark.parametrize(
    ("err", "code", "reason", "message"),
    [
        pytest.param(
            errors.not_found("deployments", "apps", "web"),
            404,
            "NotFound",
            'deployments.apps "web" not found',
            id="not-found-group",
        ),
        pytest.param(
            errors.not_found("namespaces", "", "x"),
            404,
            "NotFound",
            'namespaces "x" not found',
            id="not-found-core",
        ),
        pytest.param(
            errors.already_exists("pods", "", "p"),
            409,
            "AlreadyExists",
            'pods "p" already exists',
            id="already-exists",
        ),
        pytest.param(
            errors.conflict("configmaps", "", "x"),
            409,
            "Conflict",
            'Operation cannot be fulfilled on configmaps "x": the object has been modified; '
            "please apply your changes to the latest version and try again",
            id="conflict",
        ),
        pytest.param(errors.bad_request("nope"), 400, "BadRequest", "nope", id="bad-request"),
        pytest.param(
            errors.too_old_resource_version(1, 113),
            410,
            "Expired",
            "too old resource version: 1 (113)",
            id="expired",
        ),
        pytest.param(errors.gone("gone away"), 410, "Gone", "gone away", id="gone"),
        pytest.param(
            errors.request_entity_too_large(),
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 3145728",
            id="too-large",
        ),
        pytest.param(
            errors.unsupported_media_type(["application/json", "application/yaml"]),
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml",
            id="media-type",
        ),
        pytest.param(
            errors.forbidden("pods", "", "", 'User "u" cannot list resource "pods"'),
            403,
            "Forbidden",
            'pods is forbidden: User "u" cannot list resource "pods"',
            id="forbidden-list",
        ),
        pytest.param(
            errors.forbidden("", "", "", 'User "u" cannot get path "/x"'),
            403,
            "Forbidden",
            'forbidden: User "u" cannot get path "/x"',
            id="forbidden-nonresource",
        ),
        pytest.param(
            errors.path_not_found(),
            404,
            "NotFound",
            "the server could not find the requested resource",
            id="path-not-found",
        ),
    ],
)
def test_constructors(err: errors.ApiError, code: int, reason: str, message: str) -> None:
    assert (err.code, err.reason, err.message) == (code, reason, message)
    status = err.status()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1" and status["status"] == "Failure"
    assert (status["code"], status["reason"], status["message"]) == (code, reason, message)


def test_not_found_details_name_the_plural_resource() -> None:
    assert errors.not_found("deployments", "apps", "web").status()["details"] == {
        "name": "web",
        "group": "apps",
        "kind": "deployments",
    }


def test_invalid_single_and_many_causes() -> None:
    one = errors.invalid("Pod", "Bad_Name", [errors.invalid_value("metadata.name", "Bad_Name", "bad")])
    assert one.code == 422 and one.reason == "Invalid"
    assert one.message == 'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": bad'
    assert one.status()["details"] == {
        "name": "Bad_Name",
        "kind": "Pod",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "Bad_Name": bad',
                "field": "metadata.name",
            }
        ],
    }
    many = errors.invalid(
        "Deployment",
        "web",
        [
            errors.required("spec.selector"),
            errors.not_supported("spec.strategy.type", "X", ["Recreate", "RollingUpdate"]),
        ],
        group="apps",
    )
    assert many.message == (
        'Deployment.apps "web" is invalid: [spec.selector: Required value, spec.strategy.type: Unsupported value: '
        '"X": supported values: "Recreate", "RollingUpdate"]'
    )
    assert [c["reason"] for c in many.causes] == ["FieldValueRequired", "FieldValueNotSupported"]


def test_an_empty_field_path_keeps_its_separator_and_leaves_the_cause_without_field() -> None:
    """Upstream's field.Error.Error() is ``"%s: %s"`` whatever the path, so ``field.NewPath("")`` gives a message
    that starts with ``: ``; the StatusCause's ``field`` is omitempty, so it is absent rather than ``""``."""
    err = errors.invalid("Pod", "p", [errors.forbidden_field("", "static pods cannot be resized")])
    assert err.message == 'Pod "p" is invalid: : Forbidden: static pods cannot be resized'
    assert err.causes == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: static pods cannot be resized"}
    ]
    both = errors.invalid(
        "Pod",
        "p",
        [errors.forbidden_field("", "windows pods cannot be resized"), errors.required("spec.containers")],
    )
    assert both.message == (
        'Pod "p" is invalid: [: Forbidden: windows pods cannot be resized, spec.containers: Required value]'
    )


@pytest.mark.parametrize(
    ("value", "rendered"),
    [(None, "null"), (True, "true"), (3, "3"), ('a"b', '"a\\"b"'), ([1, 2], "[1,2]")],
    ids=["null", "bool", "int", "string-escaped", "list"],
)
def test_bad_value_rendering(value: object, rendered: str) -> None:
    assert errors.invalid_value("f", value, "").body() == f"Invalid value: {rendered}"


@pytest.mark.parametrize(
    ("resource", "details"),
    [
        ("deployments.apps", {"group": "apps", "kind": "deployments"}),
        ("pods/log", {"kind": "pods"}),
        ("leases.coordination.k8s.io", {"group": "coordination.k8s.io", "kind": "leases"}),
    ],
    ids=["grouped", "subresource", "dotted-group"],
)
def test_method_not_allowed(resource: str, details: dict[str, str]) -> None:
    err = errors.method_not_allowed("delete", resource)
    assert (err.code, err.reason) == (405, "MethodNotAllowed")
    assert err.message == "the server does not allow this method on the requested resource"
    assert err.status()["details"] == details
