"""RBACEscalation: a writer who is not cluster-admin may not create or change a Role or binding that grants more
than they hold (upstream's RBAC storage checks this on the RBAC kinds; berth checks it as a validating step)."""

from __future__ import annotations

from berth.cluster import auth
from berth.cluster.admission.chain import Attributes
from berth.cluster.host import ApiHost

RBAC_WRITES = {
    "roles.rbac.authorization.k8s.io": "role",
    "clusterroles.rbac.authorization.k8s.io": "role",
    "rolebindings.rbac.authorization.k8s.io": "binding",
    "clusterrolebindings.rbac.authorization.k8s.io": "binding",
}


class RBACEscalation:
    name = "RBACEscalation"

    def validate(self, api: ApiHost, attrs: Attributes) -> None:
        what = RBAC_WRITES.get(attrs.resource)
        if not what or not attrs.user:
            return
        ident = auth.identity_of(api, attrs.user)
        if ident.is_admin:
            return
        az = auth.authorizer(api)
        ns = str((attrs.obj.get("metadata") or {}).get("namespace") or "")
        check = az.check_role_write if what == "role" else az.check_binding_write
        err = check(ident.name, list(ident.groups), attrs.obj, ns)
        if err is not None:
            raise err
