// The platform's types under the names the engine's sources use (simulator/src only):
// the simulator implements the platform layer's job, report and control-core interfaces
// (platform/), so its code speaks of them as its own.
#pragma once

#include "ember/platform/ControlPlatform.h"
#include "ember/platform/Dram.h"
#include "ember/platform/Io.h"
#include "ember/platform/Job.h"
#include "ember/platform/Report.h"

namespace ember::sim {

using platform::CoreBus;
using platform::DramImage;
using platform::EnergyItem;
using platform::EngineReport;
using platform::Fault;
using platform::FaultKind;
using platform::faultKindName;
using platform::inputEntry;
using platform::Job;
using platform::JobEngine;
using platform::JobPrepare;
using platform::kBudgetSlack;
using platform::kMaxCycleBudget;
using platform::LayerReport;
using platform::MemoryReport;
using platform::Options;
using platform::Report;
using platform::Result;
using platform::Slice;

} // namespace ember::sim
