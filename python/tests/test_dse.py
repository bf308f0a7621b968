"""ember.dse's pieces that need no cluster: the cache key (content, not paths or order),
the cache's files, ember-dse's points from Python, and the search's Pareto front."""

import json

import pytest

import ember
import ember.dse as dse

pytest.importorskip("optuna")
from ember import dse_search  # noqa: E402 (after the skip: it imports optuna lazily anyway)


def test_key_depends_on_content_only():
    d = {"b": 1, "a": {"y": [1, 2], "x": "s"}}
    same = json.loads(json.dumps({"a": {"x": "s", "y": [1, 2]}, "b": 1}))
    opts = {"calibrate": "random:8", "check": False, "input_shapes": {}}
    k = dse.point_key(d, "m" * 64, opts)
    assert k == dse.point_key(same, "m" * 64, opts)
    assert k != dse.point_key(dict(d, b=2), "m" * 64, opts)
    assert k != dse.point_key(d, "n" * 64, opts)
    assert k != dse.point_key(d, "m" * 64, dict(opts, check=True))


def test_cache_round_trip(tmp_path):
    c = dse.Cache(tmp_path / "cache")
    assert c.get("ab" * 32) is None
    c.put("ab" * 32, {"status": "ok", "cycles": 7})
    assert c.get("ab" * 32) == {"status": "ok", "cycles": 7}
    assert (tmp_path / "cache" / "ab" / ("ab" * 32 + ".json")).exists()


def test_points_are_ember_dse_points(tmp_path):
    made = json.loads(ember._ember.dse_points(
        "", json.dumps({"axes": ["array=4,8", "act_kib=3,64"]}), str(tmp_path)))
    pts = made["points"]
    assert [p["settings"] for p in pts] == [[["array", "4"], ["act_kib", "3"]],
                                            [["array", "4"], ["act_kib", "64"]],
                                            [["array", "8"], ["act_kib", "3"]],
                                            [["array", "8"], ["act_kib", "64"]]]
    assert pts[0]["invalid"] and not pts[1]["invalid"]  # 3 KiB is not a power of two
    assert (tmp_path / "descriptions" / "p3.json").exists()
    with pytest.raises(ember.UsageError, match="frob"):
        ember._ember.dse_points("", json.dumps({"axes": ["frob=1"]}), str(tmp_path))


def test_pareto_front():
    pts = [(1, 5, 1), (2, 2, 1), (5, 1, 1), (3, 3, 1), (2, 2, 1)]
    assert dse_search.pareto(pts) == [True, True, True, False, True]
