"""Ember from Python: compile ONNX models for the Ember NPU (or the host), run them on
the cycle-accurate simulator, the Verilated RTL, the LLVM CPU backend or the
interpreter, and read the simulator's reports.

    import numpy as np, ember
    prog = ember.compile("model.onnx")               # int8, for the NPU (isa/ember-v1.json)
    out = prog.run({"input": x})                     # on the simulated NPU ("sim")
    ref = prog.run({"input": x}, device="interp")    # the int8 interpreter
    ember.compare(out, ref)                          # {"output": {"bit_exact": True, ...}}
    prog.report["cycles"], prog.save("model.elf")

Errors raise ember.Error (bad input: the file, the place and the reason, as the command
line tools print them), ember.Unsupported (valid input Ember lacks, e.g. an operator),
ember.UsageError (a bad argument). Built by the normal build into BUILD/python; use it
with PYTHONPATH=BUILD/python (docs/python.md).
"""

from collections.abc import Mapping as _Mapping
import json as _json
import os as _os
import tempfile as _tempfile

import numpy as _np

from . import _ember
from . import isa
from ._ember import Error, InternalError, Unsupported, UsageError

__all__ = ["compile", "load", "compare", "backends", "isa", "Program",
           "Error", "Unsupported", "UsageError", "InternalError"]


def _path(p):
    return _os.fspath(p) if p is not None else ""


class Program:
    """A compiled (or loaded) model. Create it with ember.compile or ember.load."""

    def __init__(self, core, isa=""):
        self._core = core
        self._reports = []
        self._isa = isa  # the description's path ("": the default), for serve()

    @property
    def target(self):
        """"npu", "cpu" or "interp"."""
        return self._core.target

    @property
    def precision(self):
        """"int8" or "float"."""
        return self._core.precision

    @property
    def isa_name(self):
        """The name of the NPU description the program is built for."""
        return self._core.isa_name

    @property
    def devices(self):
        """The devices run() accepts, the default first."""
        return list(self._core.devices)

    @property
    def inputs(self):
        """[{"name", "dtype", "shape"}] of the model's inputs."""
        return self._core.inputs

    @property
    def outputs(self):
        """[{"name", "dtype", "shape"}] of the model's outputs."""
        return self._core.outputs

    @property
    def whole_on_npu(self):
        """True when the NPU runs the whole model: save() writes an NPU binary (ELF);
        otherwise a package of NPU and host segments."""
        return self._core.whole_on_npu

    @property
    def placement(self):
        """NPU programs: one line saying what runs where ("" for host programs)."""
        return self._core.placement

    @property
    def placement_report(self):
        """NPU programs: every node with its backend and the reason for each fallback."""
        return self._core.placement_report

    @property
    def compile_summary(self):
        """NPU programs run whole: the NPU compiler's per-layer table."""
        return self._core.compile_summary

    @property
    def reports(self):
        """The simulator's reports of the last run on sim or rtl, one dict per NPU
        segment (the same JSON as ember-run --report); [] after a host run."""
        return self._reports

    @property
    def report(self):
        """The last run's report when one NPU segment ran (a model the NPU runs whole);
        None after a host run. Partitioned programs: see `reports`."""
        return self._reports[0] if len(self._reports) == 1 else None

    def run(self, inputs, device=None):
        """Runs on `device` ("sim", "rtl", "cpu", "interp"; default: devices[0]) and
        returns {output name: numpy array}. `inputs` maps input names to arrays (lists
        are converted; float32 for float inputs, NumPy's default float64 too). Each array
        is checked (dtype, shape, NaN for int8 programs) before it is copied, once, in C++
        (python/src/InputCheck.cpp): any strides, byte order or alignment."""
        if not isinstance(inputs, _Mapping):
            raise UsageError(f"run: inputs is a dict such as {{'input': array}}, "
                             f"not {type(inputs).__name__}")
        out = self._core.run(dict(inputs), device or "")
        self._reports = [_json.loads(r) for r in self._core.last_reports_json]
        return out

    def cross_check(self, inputs, devices):
        """Runs on every device of `devices` (at least two, e.g. ["interp", "cpu", "sim"])
        and compares each with the first, as ember-run --compare does: int8 outputs bit for
        bit (and against the float model on the interpreter: cosine, top-1), float ones
        within 1e-4 * max(1, max|ref|); sim and rtl also on every instruction's timing and
        the energy. Returns {"agree": bool, "mismatch": [str], "table": str,
        "outputs": {device: {name: array}}, "seconds": {device: float}}; `reports`
        afterwards holds the first NPU device's run."""
        if not isinstance(inputs, _Mapping):
            raise UsageError(f"cross_check: inputs is a dict such as {{'input': array}}, "
                             f"not {type(inputs).__name__}")
        if isinstance(devices, str):
            devices = [d for d in devices.split(",") if d]
        result = self._core.cross_check(dict(inputs), list(devices))
        self._reports = [_json.loads(r) for r in self._core.last_reports_json]
        result["agree"] = not result["mismatch"]
        return result

    def write_html(self, path):
        """Writes the last NPU run (sim or rtl) as one self-contained HTML page: cycles and
        MAC utilisation per layer, a roofline, energy by component and by layer, engine
        activity and the placement (as ember-run --html)."""
        self._core.write_html(_path(path))

    def serve(self, requests, concurrency=1, system=None, queue_depth=None, when_full="block",
              distinct_inputs=None, seed=0, reference=None, batch=1, batch_deadline=0):
        """Serves `requests` requests of this NPU program in simulated time, as ember-run
        --requests does (docs/systems.md section 4): each distinct input (default
        min(requests, 4), random from `seed` + k) is simulated, then `concurrency` clients
        are scheduled over one NPU or, with `system` (isa/systems/*.json), over its
        devices (a pipeline package stage by stage, a whole binary replicated). At most
        `queue_depth` requests are admitted (default: concurrency); a full queue blocks or
        refuses (`when_full`). `reference`: an NPU binary every output must match bit for
        bit. `batch` > 1: a free device takes up to `batch` ready requests of its stage at
        once, waiting at most `batch_deadline` cycles after the oldest became ready (as
        --batch and --batch-deadline). Returns the serving report as a dict: requests,
        completed, refused, throughput_per_s, latency_cycles {p50, p95, p99, mean, max},
        devices, stages (and batches, mean_batch_size)."""
        if self.target != "npu":
            raise UsageError(f"serve: runs NPU programs (this one's target is {self.target})")
        with _tempfile.TemporaryDirectory() as d:
            path = _os.path.join(d, "program.elf" if self.whole_on_npu else "program.pkg")
            self.save(path)
            text = _ember.serve(path, self._isa, int(requests), int(concurrency),
                                int(queue_depth or 0), when_full, _path(system),
                                int(distinct_inputs or 0), int(seed), _path(reference),
                                int(batch), int(batch_deadline))
        return _json.loads(text)

    def save(self, path):
        """Writes what emberc writes: the NPU binary (ELF) when the NPU runs the whole
        model, else a package. Atomic: a failed save leaves no file."""
        self._core.save(_path(path))

    def __repr__(self):
        ins = ", ".join(f"{i['name']}{list(i['shape'])}" for i in self.inputs)
        return f"<ember.Program target={self.target} precision={self.precision} inputs=({ins})>"


def _input_shapes(shapes):
    """input_shapes= as {name: [int, ...]}; UsageError naming the input and the reason."""
    if shapes is None:
        return {}
    if not isinstance(shapes, dict):
        raise UsageError(f"input_shapes: expects a dict such as {{'input': (1, 3, 224, 224)}}, "
                         f"got {shapes!r}")
    out = {}
    for name, dims in shapes.items():
        where = f"input_shapes[{name!r}]"
        if not isinstance(name, str):
            raise UsageError(f"{where}: input names are strings")
        if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
            raise UsageError(f"{where}: expects a tuple of whole numbers such as (1, 3, 224, 224), "
                             f"got {dims!r}")
        dims = list(dims)
        for i, d in enumerate(dims):
            if isinstance(d, (bool, _np.bool_)) or not isinstance(d, (int, _np.integer)):
                raise UsageError(f"{where}: dimension {i} of input '{name}' is {d!r}, "
                                 "not a whole number")
            if d < 1:
                raise UsageError(f"{where}: dimension {i} of input '{name}' is {d}; every "
                                 "dimension must be at least 1")
        out[name] = [int(d) for d in dims]
    return out


def _bind(values):
    """bind= as {name: array}; UsageError for anything else."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise UsageError(f"bind: expects a dict of arrays such as {{'scales': numpy.array(...)}}, "
                         f"got {values!r}")
    out = {}
    for name, value in values.items():
        if not isinstance(name, str):
            raise UsageError(f"bind[{name!r}]: input names are strings")
        out[name] = _np.asarray(value)
    return out


def compile(model, target="npu", isa=None, precision=None, calibrate="random:8",
            calibration="minmax", fallback=None, host_kinds=(), host_nodes=(),
            input_shapes=None, bind=None):
    """Compiles an ONNX model.

    target: "npu" (int8: quantized, partitioned between the NPU and the host), "cpu" (the
        LLVM backend) or "interp".
    isa: the NPU description (a path; default isa/ember-v1.json or $EMBER_ISA).
    precision: "int8" or "float" (default: int8 for the NPU, float otherwise).
    calibrate: calibration inputs: FILE.npy, a folder of .npy files, or "random:N".
    calibration: "minmax", "percentile" or "kl".
    fallback: NPU programs: what runs the nodes the NPU cannot ("cpu", "interp" or
        "none" to refuse them, listing every one).
    host_kinds, host_nodes: node kinds / names forced onto the host.
    input_shapes: {input name: shape}, e.g. {"input": (1, 3, 224, 224)}: decides the
        dimensions the model leaves unknown (a dynamic batch); it must keep the model's
        rank and the dimensions the model fixes.
    bind: {input name: array}: inputs folded into constants at import (shape operands
        such as Resize's scales or Reshape's target); the array's dtype must be the
        input's (e.g. numpy.int64 for a Reshape target, numpy.float32 for scales).
    """
    core = _ember.Program.compile(_path(model), target, _path(isa), precision or "",
                                  _path(calibrate), calibration, fallback or "",
                                  list(host_kinds), list(host_nodes),
                                  _input_shapes(input_shapes), _bind(bind))
    return Program(core, _path(isa))


def load(path, isa=None):
    """Loads an NPU binary (ELF) or package written by emberc or Program.save."""
    return Program(_ember.Program.load(_path(path), _path(isa)), _path(isa))


def compare(a, b, atol=0.0):
    """Compares two output dicts (e.g. two devices' runs) name by name. Returns
    {name: {"bit_exact", "max_abs_diff", "within_atol"}}; a name missing from either side
    raises ember.UsageError."""
    if set(a) != set(b):
        raise UsageError(f"compare: the outputs differ in names: {sorted(set(a) ^ set(b))}")
    out = {}
    for name in sorted(a):
        x, y = _np.asarray(a[name]), _np.asarray(b[name])
        if x.shape != y.shape:
            raise UsageError(f"compare: output '{name}' has shapes {x.shape} and {y.shape}")
        same = x.dtype == y.dtype and x.tobytes() == y.tobytes()
        diff = float(_np.max(_np.abs(x.astype(_np.float64) - y.astype(_np.float64)))) \
            if x.size else 0.0
        out[name] = {"bit_exact": bool(same), "max_abs_diff": diff,
                     "within_atol": bool(diff <= atol)}
    return out


def backends():
    """The backends of this build ("interp", "cpu" when LLVM is built, "npu")."""
    return list(_ember.backends())
