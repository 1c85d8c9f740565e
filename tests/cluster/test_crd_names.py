"""The CRD naming controller's conflicts, as upstream: a CRD whose kind another CRD of its group already serves is
refused (``NamesAccepted=False``, ``KindConflict``, not ``Established``), and deleting the other one frees the names,
so the refused CRD is accepted and served without being written again (``requeueAllOtherGroupCRDs``)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cluster.api import Api
from berth.cluster.store import Store

CRDS = "customresourcedefinitions.apiextensions.k8s.io"


@pytest.fixture()
def api() -> Api:
    return Api(Store(retain=50))


def crd(plural: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object"}}}],
        },
    }  # fmt: skip


def conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in obj["status"]["conditions"]}


def test_a_kind_in_use_is_refused_until_its_owner_is_deleted(api: Api) -> None:
    api.create(CRDS, crd("widgets", "Widget"))
    refused = api.create(CRDS, crd("gadgets", "Widget"))
    assert conditions(refused) == {
        "NamesAccepted": ("False", "KindConflict", '"Widget" is already in use'),
        "Established": ("False", "NotAccepted", "not all names are accepted"),
    }
    assert "gadgets.example.com" not in {t.resource for t in api.registry.all()}
    api.delete(CRDS, "widgets.example.com")
    accepted = api.get(CRDS, "gadgets.example.com")
    assert conditions(accepted)["NamesAccepted"] == ("True", "NoConflicts", "no conflicts found")
    assert conditions(accepted)["Established"][0] == "True"
    assert accepted["status"]["acceptedNames"]["kind"] == "Widget"
    assert "gadgets.example.com" in {t.resource for t in api.registry.all()}
    assert int(accepted["metadata"]["resourceVersion"]) > int(refused["metadata"]["resourceVersion"])


def test_deleting_a_crd_of_another_group_changes_nothing(api: Api) -> None:
    api.create(CRDS, crd("widgets", "Widget"))
    refused = api.create(CRDS, crd("gadgets", "Widget"))
    other = crd("things", "Thing")
    other["metadata"]["name"] = "things.other.io"
    other["spec"]["group"] = "other.io"
    api.create(CRDS, other)
    api.delete(CRDS, "things.other.io")
    assert (
        api.get(CRDS, "gadgets.example.com")["metadata"]["resourceVersion"]
        == refused["metadata"]["resourceVersion"]
    )
