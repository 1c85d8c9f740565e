"""Names made up by controllers and generateName: the one implementation (berth.kube.naming)."""

import random

from berth.kube import naming


def test_fnv32a_matches_go_hash_fnv_new32a() -> None:
    # Reference values of FNV-1a 32 (the offset basis for empty input).
    assert naming.fnv32a(b"") == 0x811C9DC5
    assert naming.fnv32a(b"a") == 0xE40C292C
    assert naming.fnv32a(b"foobar") == 0xBF9CF968


def test_safe_encode_maps_each_character_onto_the_vowel_free_alphabet() -> None:
    # upstream SafeEncodeString: alphanums[int(rune) % 27]; '0' is 48 -> 48 % 27 = 21 -> '4'
    assert naming.safe_encode("0") == "4"
    assert naming.safe_encode("1234567890") == "56789bcdf4"
    assert set(naming.safe_encode("any text, even ü")) <= set(naming.SUFFIX_ALPHABET)
    assert naming.short_hash("x") == naming.safe_encode(str(naming.fnv32a(b"x")))


def test_random_suffix_is_reproducible_with_a_seeded_generator() -> None:
    one = naming.random_suffix(rng=random.Random(7))
    assert one == naming.random_suffix(rng=random.Random(7))
    assert len(one) == 5 and set(one) <= set(naming.SUFFIX_ALPHABET)
    assert len(naming.random_suffix(8)) == 8


def test_generated_name_cuts_a_long_prefix_so_the_name_fits_63_characters() -> None:
    name = naming.generated_name("x" * 80 + "-")
    assert len(name) == 63 and name.startswith("x" * 58)
    short = naming.generated_name("web-", rng=random.Random(1))
    assert short.startswith("web-") and len(short) == 9


def _template(labels: dict[str, str]) -> dict[str, object]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_pod_template_hash_is_stable_and_ignores_its_own_label() -> None:
    h = naming.pod_template_hash(_template({"app": "web"}))
    assert h == naming.pod_template_hash(_template({"app": "web"}))
    assert h == naming.pod_template_hash(_template({"app": "web", "pod-template-hash": h}))
    assert h != naming.pod_template_hash(_template({"app": "db"}))
    assert h != naming.pod_template_hash(_template({"app": "web"}), collision_count=1)
    assert set(h) <= set(naming.SUFFIX_ALPHABET)


def test_pod_template_hash_does_not_change_the_template() -> None:
    t = _template({"app": "web", "pod-template-hash": "abc"})
    naming.pod_template_hash(t)
    assert t["metadata"] == {"labels": {"app": "web", "pod-template-hash": "abc"}}


def test_the_simulation_and_the_embedded_cluster_name_a_deployment_s_replicaset_alike() -> None:
    from berth.cluster.controllers import deployment
    from berth.schedule import simulate

    t = _template({"app": "web"})
    assert simulate.template_hash(t) == deployment.template_hash(t) == naming.pod_template_hash(t)
