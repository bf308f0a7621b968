"""ember.dse's pieces that need no cluster: the cache key (content, not paths or order),
the cache's files, ember-dse's points from Python, and the search's Pareto front."""

import json
import shutil

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
    c.put("ab" * 31 + "cd", '{"cycles":8,"status":"ok"}')  # a row as the library writes it
    assert c.get("ab" * 31 + "cd") == {"status": "ok", "cycles": 8}
    assert sorted(p.name for p in (tmp_path / "cache" / "ab").iterdir()) == \
        ["ab" * 32 + ".json", "ab" * 31 + "cd.json"]  # no temporary file left
    # A worker lives on while its cache folder is removed (a new sweep cleaning up): the
    # next row still lands, though this process made that folder once already.
    shutil.rmtree(tmp_path / "cache")
    c.put("ab" * 32, {"status": "ok", "cycles": 9})
    assert c.get("ab" * 32) == {"status": "ok", "cycles": 9}


def test_batch_rows_travel_as_the_librarys_text(tmp_path, monkeypatch):
    """A Dask task returns a computed row as the library's JSON text and caches that text;
    evaluate_point and a second batch (from the cache) give the same row as a dict."""
    text = '{"cycles":12,"energy_uj":0.5,"status":"ok"}'
    monkeypatch.setattr(dse._ember, "dse_evaluate", lambda point, model, check: text)
    monkeypatch.setattr(dse, "_worker_model", lambda model, options: None)
    opts = {"calibrate": "random:8", "check": False, "input_shapes": {}}
    task = ('{"index":0}', {"path": "m.onnx", "sha256": "m" * 64}, "ef" * 32)
    first = dse.evaluate_batch([task], opts, str(tmp_path))
    assert first == [("row", text)]
    again = dse.evaluate_batch([task], opts, str(tmp_path))
    assert again == [("row", json.loads(text))]
    assert dse.evaluate_point(*task[:2], opts, str(tmp_path), task[2]) == (json.loads(text), True)


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


def test_a_missing_scheduler_file_is_named(tmp_path):
    """--scheduler names a file a batch job's scheduler has not written yet: the error says
    so, not Dask's "not a valid address"."""
    pytest.importorskip("distributed")
    with pytest.raises(ember.UsageError, match="no such scheduler file"):
        dse._client(str(tmp_path / "scheduler.json"), 1)
