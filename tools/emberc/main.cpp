// emberc: compile an ONNX model for the Ember NPU, or into an AOT bundle for the host
// CPU. A thin main: its options, then the compile driver's flow (ember/driver/CompileTool.h).
#include "ember/cli/Cli.h"
#include "ember/cli/InputOptions.h"
#include "ember/cli/PartitionOptions.h"
#include "ember/driver/CompileTool.h"

#include <string>

using namespace ember;
using ember::driver::checkCompileToolOptions;
using ember::driver::compileTool;
using ember::driver::CompileToolOptions;

namespace {

const char* kDescription =
    "emberc: compiles an ONNX model for the Ember NPU, or into a bundle for this host's CPU.";

const char* kFooter =
    R"(Imports the model, runs the default optimisation pipeline, calibrates and quantizes it to
int8 (docs/numerics.md), places every node on the NPU or, where the NPU cannot run it, on
the host (--fallback; docs/compiler/partitioning.md), lowers every NPU layer to NPU
instructions (tiling chosen by a cost model read from the ISA description) and writes the
output atomically:
  - the NPU binary (ELF: instructions, constants, I/O table, memory map, debug map) when
    the NPU runs the whole model; it prints the compile summary (layers, tiles,
    instructions, SRAM use, estimated cycles, binary size, compile time);
  - otherwise a package (docs/package.md): every NPU segment's binary, every host
    segment, and a manifest of how they connect; it prints the placement summary.
Run either with `ember-run OUT --device sim`; list a package with `ember-objdump OUT`.

With --backend cpu, compiles the model ahead of time for this host's CPU (LLVM) into a
bundle: DIR/NAME.o (relocatable object), DIR/NAME.h (C header: entry point NAME_run,
region sizes, input/output offsets) and DIR/NAME.weights (the constant region). Link
NAME.o and libm into a C program (see examples/bundle). Float32 unless --precision int8.

examples:
  emberc MODEL.onnx -o OUT.elf [options]
  emberc MODEL.onnx -o OUT.pkg --partition-report
  emberc MODEL.onnx --system isa/systems/ember-v1-x4.json --partition-report
  emberc MODEL.onnx --system isa/systems/ember-v1-x4.json -o OUT.pkg
  emberc MODEL.onnx -o OUT.elf --input-shape input=1x3x224x224   (a dynamic batch)
  emberc MODEL.onnx --backend cpu --emit-bundle DIR [--bundle-name NAME] [options]

exit status: 0 on success; 1 on bad input (unreadable or malformed model, bad calibration
data, an --input-shape or --bind the model refuses (a name it lacks, another rank or
element type, a dimension it fixes otherwise), an input dimension nothing decides, with
--fallback none operators the NPU cannot run: all of them are listed; an
output path that is a folder or one of the inputs; --op-table-check: a table that
differs); 2 on a bad command line.)";

/// Declares emberc's command line on `app`; parsing fills `o`.
void declareOptions(CLI::App& app, CompileToolOptions& o) {
  app.add_option("MODEL", o.model, "the ONNX model to compile")->type_name("");
  app.add_option("-o,--output", o.output,
                 "the binary or package to write (required unless --print-pipeline\n"
                 "or an --op-table option alone)")
      ->type_name("OUT")
      ->check(cli::pathValue());
  app.add_option("--backend", o.backend, "the target (default npu)")
      ->type_name("TARGET")
      ->check(CLI::IsMember({"npu", "cpu"}));
  app.add_option("--emit-bundle", o.bundleDir,
                 "cpu: the folder the bundle is written to (required for cpu)")
      ->type_name("DIR")
      ->check(cli::pathValue());
  app.add_option("--bundle-name", o.bundleName,
                 "cpu: the bundle's C name (default: the model file's stem)")
      ->type_name("NAME");
  app.add_option("--precision", o.precision,
                 "cpu: compile the float model or the quantized one (default\n"
                 "float; the NPU is always int8)")
      ->type_name("P")
      ->check(CLI::IsMember({"float", "int8"}));
  app.add_option("--isa", o.isa,
                 "the NPU description (default: $EMBER_ISA, else the installed\n"
                 "or source tree's isa/ember-v1.json)")
      ->type_name("FILE.json");
  app.add_option("--calibrate", o.calibrate,
                 "calibration inputs: FILE.npy, a folder of .npy files, or\n"
                 "random:N (default random:8)")
      ->type_name("SPEC");
  app.add_option("--calibration", o.calibration,
                 "how ranges are chosen: minmax (default), percentile or kl")
      ->type_name("METHOD");
  CLI::Option* dump = app.add_option("--dump-profile", o.dumpProfile,
                                     "write the calibration profile (to reuse with --load-profile)")
                          ->type_name("P.json");
  app.add_option("--load-profile", o.loadProfile,
                 "quantize with this profile instead of calibrating")
      ->type_name("P.json")
      ->excludes(dump);
  app.add_flag("--partition-report", o.partitionReport,
               "print the placement of every node (backend, reason), the\n"
               "coverage (% of nodes and of MACs on the NPU) and the segments");
  app.add_option("--system", o.system,
                 "pipeline the model over a system of NPUs (isa/systems/*.json,\n"
                 "docs/systems.md): with --partition-report, print each stage's\n"
                 "device, layers, cycles and boundary bytes, and the imbalance;\n"
                 "with -o OUT.pkg, write the pipeline's package (one NPU binary per\n"
                 "stage; ember-run OUT.pkg --system SYS.json --requests N serves it)")
      ->type_name("SYS.json");
  app.add_option("--stage-cycles", o.stageCycles,
                 "with --system: cost the layers with the cycles a simulation measured\n"
                 "(R.json: ember-sim BIN.elf --report R.json, the whole model on the\n"
                 "devices' description) instead of the compiler's estimates")
      ->type_name("R.json");
  app.add_option("--dump-lir", o.dumpLir,
                 "write the low-level IR the NPU compiled from (each NPU\n"
                 "segment's: a layer per compute instruction, in order)")
      ->type_name("FILE");
  app.add_flag("--print-pipeline", o.printPipeline, "print the default pass pipeline");
  app.add_flag("--op-table", o.opTable,
               "print what every part of Ember has for each node kind (the\n"
               "table of docs/compiler/operators.md)");
  app.add_option("--op-table-check", o.opTableCheck,
                 "exit 1 unless DOC holds that table between its markers")
      ->type_name("DOC");
  app.add_option("--op-table-update", o.opTableUpdate,
                 "write the table into DOC between its markers")
      ->type_name("DOC");
  app.add_flag("-q,--quiet", o.quiet, "print only errors");
  cli::addPartitionOptions(app, o.partition);
  cli::addInputOptions(app, o.inputs, cli::InputOptionSet::ShapesAndBinds);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, "emberc");
  cli::setup(app, cli::Description::Selectable);
  CompileToolOptions o;
  declareOptions(app, o);
  app.footer(kFooter);
  return cli::run(app, argc, argv, [&] {
    checkCompileToolOptions(o);
    return compileTool(o);
  });
}
