#pragma once
/// \file
/// ember-dse's points, rows and outputs for Python (`ember._ember.dse_*`), so that
/// python/ember/dse.py distributes the tool's own row computation (runtime/session/dse:
/// Points, Sweep::evaluateModel, Report) over Dask workers instead of copying it.

#include <pybind11/pybind11.h>

namespace ember::python {

/// Adds DseModel, dse_points, dse_point, dse_load_model, dse_evaluate, dse_report and
/// dse_model_name to `m`.
void bindDse(pybind11::module_& m);

} // namespace ember::python
