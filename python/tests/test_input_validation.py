"""Program.run's inputs are checked before they are copied (python/src/InputCheck.cpp):
property-based tests (Hypothesis) over dtypes, shapes, strides, byte orders and values.
Whatever the array, a run returns the outputs of the same values as a plain C-ordered
float32 array, or raises ember.Error naming the input; never another exception, never a
crash, never a copy of an array whose shape is wrong."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

# Deterministic (the same examples every run, as ctest needs) and no example database
# written into the source tree.
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=300,
                    suppress_health_check=list(HealthCheck))

SHAPE = (3, 12)  # the mlp fixture's input x

# Every dtype kind NumPy has, in both byte orders where it has one; half of the draws are
# the float dtypes a float32 input takes.
FLOATS = ["<f4", ">f4", "<f8", ">f8"]
OTHERS = ["<f2", "i1", "u1", "<i2", ">i4", "<i8", ">u8", "?", "<c8", "O", "U3", "M8[s]"]


def _values(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "O":
        return st.sampled_from([None, 1.5, "x", b"y"])
    if dt.kind == "U":
        return st.text(max_size=3)
    if dt.kind == "M":
        return st.integers(0, 10**9).map(lambda v: np.datetime64(v, "s"))
    if dt.kind == "f":
        return st.one_of(st.floats(-4, 4, width=min(32, 8 * dt.itemsize)),
                         st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0,
                                          float(np.finfo(dt).max)]))
    return hnp.from_dtype(dt)


@st.composite
def arrays(draw):
    """An array of any dtype and shape, mostly the declared one, in any layout: C order,
    Fortran order, transposed, strided with positive or negative steps, a broadcast view,
    or unaligned inside a byte buffer."""
    dtype = draw(st.one_of(st.sampled_from(FLOATS), st.sampled_from(OTHERS)))
    shape = draw(st.one_of(st.just(SHAPE), st.just(SHAPE), st.just(SHAPE[::-1]),
                           hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=13)))
    layout = draw(st.sampled_from(["c", "fortran", "transposed", "strided", "broadcast",
                                   "unaligned"]))
    elements = _values(dtype)
    if layout == "transposed":
        return draw(hnp.arrays(dtype, shape[::-1], elements=elements)).T
    if layout == "strided":
        steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in shape]
        base = draw(hnp.arrays(dtype, tuple(d * abs(s) for d, s in zip(shape, steps)),
                               elements=elements))
        return base[tuple(slice(None, None, s) for s in steps)]
    if layout == "broadcast" and len(shape) > 0:
        row = draw(hnp.arrays(dtype, (1,) * (len(shape) - 1) + (shape[-1],),
                              elements=elements))
        return np.broadcast_to(row, shape)
    a = draw(hnp.arrays(dtype, shape, elements=elements))
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "unaligned" and a.dtype.kind not in "OUM":
        buf = bytearray(a.nbytes + 1)
        u = np.frombuffer(buf, dtype=a.dtype, offset=1, count=a.size).reshape(a.shape)
        u[...] = a
        return u
    return a


def _acceptable(a, int8):
    """Whether a run must accept `a` for the float32 input x of shape SHAPE: the declared
    shape, float32 (or NumPy's default float64) in either byte order, and no NaN when the
    program is int8."""
    if a.shape != SHAPE or a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        return False
    return not (int8 and np.isnan(a).any())


@pytest.fixture(scope="module")
def programs(mlp_model):
    path, _ = mlp_model
    progs = {("interp", "float"): ember.compile(path, target="interp", precision="float"),
             ("interp", "int8"): ember.compile(path, target="interp", precision="int8")}
    npu = ember.compile(path)  # int8 on the NPU; also runs on the host devices
    for device in npu.devices:
        if device != "rtl":  # the Verilated model: covered by the sim/rtl tests
            progs[(device, "npu")] = npu
    return progs


def _check(prog, device, int8, a):
    if _acceptable(a, int8):
        event(f"{device}: accepted")
        with np.errstate(over="ignore"):  # float64 beyond float32's range becomes inf
            want = prog.run({"x": np.ascontiguousarray(a, dtype=np.float32)}, device=device)
            got = prog.run({"x": a}, device=device)
        assert got.keys() == want.keys()
        for name in want:
            assert np.array_equal(got[name], want[name], equal_nan=True), (device, name)
    else:
        event(f"{device}: refused")
        with pytest.raises(ember.Error) as e:
            prog.run({"x": a}, device=device)
        assert "input 'x'" in str(e.value)


_X = np.linspace(-2, 2, 36, dtype=np.float32).reshape(SHAPE)


@SETTINGS
@given(a=arrays())
@example(a=_X.astype(">f4"))  # big-endian: was read as little-endian bytes
@example(a=_X.astype(">f8"))
@example(a=np.where(_X > 1, np.nan, _X))  # NaN: was accepted by int8 runs on interp and cpu
@example(a=np.repeat(_X, 2, axis=1)[:, ::-2])  # negative strides
@example(a=np.broadcast_to(_X[:1], SHAPE))
@example(a=_X[:, :8])  # the wrong shape
def test_any_array_runs_as_its_values_or_is_refused_by_name(programs, a):
    for (device, kind), prog in programs.items():
        _check(prog, device, kind != "float", a)


@SETTINGS
@given(a=hnp.arrays(np.float32, SHAPE, elements=st.floats(-4, 4, width=32)),
       where=st.tuples(st.integers(0, SHAPE[0] - 1), st.integers(0, SHAPE[1] - 1)))
def test_an_int8_run_refuses_nan_on_every_device(programs, a, where):
    a = a.copy()
    a[where] = np.nan
    for (device, kind), prog in programs.items():
        if kind == "float":
            prog.run({"x": a}, device=device)  # a float program computes with NaN
            continue
        with pytest.raises(ember.Error) as e:
            prog.run({"x": a}, device=device)
        assert "input 'x'" in str(e.value) and "NaN" in str(e.value), device


def test_non_arrays_are_refused_by_name(programs):
    prog = programs[("interp", "int8")]
    for value in ([[1.0, 2.0], [3.0]], {"a": 1}, object(), "text", None):
        with pytest.raises(ember.Error) as e:
            prog.run({"x": value})
        assert "input 'x'" in str(e.value)
    with pytest.raises(ember.UsageError):
        prog.run([("x", np.zeros(SHAPE, np.float32))])


# Huge views of a few bytes (a broadcast or a zero-stride view of terabytes): refused
# without a copy, in a child process so that a crash is a failure, not the end of the
# suite, and with its peak memory measured.
_HUGE = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from numpy.lib.stride_tricks import as_strided
    import ember
    prog = ember.compile(sys.argv[1], target=sys.argv[2], precision="int8")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    one = np.ones(1, dtype=np.float32)
    views = [np.broadcast_to(np.float32(1), (1 << 20, 1 << 20)),
             np.broadcast_to(np.float64(1), (1 << 20, 1 << 20)),
             np.broadcast_to(np.float32(1), (1 << 14, 1 << 14)),   # 1 GiB as a copy
             np.broadcast_to(np.float32(1), (3, 1 << 26)),
             as_strided(one, shape=(1 << 20, 1 << 20, 1 << 20), strides=(0, 0, 0)),
             np.broadcast_to(np.float32(1), (3, 12, 1 << 24))]
    for v in views:
        try:
            prog.run({"x": v}, device=sys.argv[2])
        except ember.Error as e:
            assert "input 'x'" in str(e) and "shape" in str(e), str(e)
        else:
            raise SystemExit(f"{v.shape} was accepted")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 64 * 1024, f"peak memory grew by {grown} KiB"
    print("ok")
""")


@pytest.mark.parametrize("device", ["interp", "cpu"])
def test_huge_views_of_the_wrong_shape_are_refused_before_a_copy(mlp_model, device):
    if device not in ember.backends():
        pytest.skip(f"this build has no {device} backend")
    path, _ = mlp_model
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", _HUGE, path, device], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)
