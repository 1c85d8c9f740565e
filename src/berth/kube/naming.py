"""Names the controllers and the API server make up: hashes and generated suffixes (apimachinery's ``util/rand``,
``names.SimpleNameGenerator``, the controllers' ``ComputeHash``).

The one implementation: the embedded cluster's controllers, its ``generateName`` and the scheduler's simulation
(which expands Deployments the way those controllers do) all name objects through this module, so a simulated
ReplicaSet and an embedded cluster's one carry the same ``pod-template-hash`` for the same template.

Not byte-for-byte upstream: the template hash is FNV-32a over berth's canonical JSON of the template, where upstream
hashes a spew dump of the Go struct. It is stable (the same template always gives the same hash) and drawn from the
same alphabet, which is what users and selectors depend on.
"""

import copy
import random
from collections.abc import Mapping
from typing import Any

from berth.kube.canonical import canonical_json

SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""apimachinery ``rand`` alphabet (no vowels, no look-alikes): what ``generateName`` appends and hashes map onto."""

SUFFIX_LENGTH = 5
MAX_GENERATED_PREFIX = 63 - SUFFIX_LENGTH
"""upstream ``maxGeneratedNameLength``: a longer prefix is cut so prefix + suffix still fit a 63-character name."""

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"

_system_rng = random.SystemRandom()


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``)."""
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """apimachinery ``rand.SafeEncodeString``: each character mapped onto :data:`SUFFIX_ALPHABET` (how hashes become
    name fragments: no vowels, so no accidental words)."""
    return "".join(SUFFIX_ALPHABET[ord(ch) % len(SUFFIX_ALPHABET)] for ch in text)


def short_hash(text: str) -> str:
    """``SafeEncodeString(fmt.Sprint(fnv32a(text)))``: a stable name fragment for ``text``."""
    return safe_encode(str(fnv32a(text.encode("utf-8"))))


def random_suffix(n: int = SUFFIX_LENGTH, rng: random.Random | None = None) -> str:
    """``rand.String(n)``; ``rng`` makes it reproducible (the simulation draws from its seeded generator)."""
    r = rng if rng is not None else _system_rng
    return "".join(r.choice(SUFFIX_ALPHABET) for _ in range(n))


def generated_name(prefix: str, rng: random.Random | None = None) -> str:
    """``SimpleNameGenerator.GenerateName``: ``prefix`` (cut to :data:`MAX_GENERATED_PREFIX`) + a random suffix."""
    return prefix[:MAX_GENERATED_PREFIX] + random_suffix(rng=rng)


def pod_template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of a pod template: its own label left out (a ReplicaSet's template carries it),
    ``status.collisionCount`` mixed in when set (how a Deployment escapes a name clash)."""
    t = copy.deepcopy(dict(template))
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    data = canonical_json(t)
    if collision_count:
        data += f"#{collision_count}"
    return short_hash(data)
