// ember-run's serving options (ember/cli/ServeOptions.h).
#include "ember/cli/ServeOptions.h"

#include "ember/cli/Cli.h"

#include <cstdint>

namespace ember::cli {

void addServeOptions(CLI::App& app, session::ServeOptions& o) {
  using L = session::ServeLimits;
  const char* group = "Serving (docs/systems.md section 4)";
  app.add_option("--requests", o.requests,
                 "serve N requests of the model, binary or package in simulated time:\n"
                 "each stage simulated, the requests scheduled over the devices;\n"
                 "prints throughput, p50/p95/p99 latency and per-device utilisation")
      ->type_name("N")
      ->group(group)
      ->check(wholeNumber(1, L::maxRequests));
  app.add_option("--concurrency", o.concurrency,
                 "clients, each with one request outstanding (default 1)")
      ->type_name("C")
      ->group(group)
      ->check(wholeNumber(1, L::maxConcurrency));
  app.add_option("--queue-depth", o.queueDepth,
                 "at most Q requests admitted at once (default: --concurrency)")
      ->type_name("Q")
      ->group(group)
      ->check(wholeNumber(1, L::maxQueueDepth));
  app.add_option("--when-full", o.whenFull,
                 "block (default: the client waits for a slot) or refuse (it is\n"
                 "told busy and issues its next request when one completes)")
      ->type_name("POLICY")
      ->group(group)
      ->check(CLI::IsMember({"block", "refuse"}));
  app.add_option("--batch", o.batch,
                 "a free device takes up to B requests ready for its stage at once:\n"
                 "B back-to-back runs, inputs and outputs in one link transfer each\n"
                 "(default 1)")
      ->type_name("B")
      ->group(group)
      ->check(wholeNumber(1, L::maxBatch));
  app.add_option("--batch-deadline", o.batchDeadline,
                 "with fewer than B ready, wait at most this many cycles after the\n"
                 "oldest became ready, then take what is ready (default 0)")
      ->type_name("CYCLES")
      ->group(group)
      ->check(wholeNumber(0, L::maxBatchDeadline));
  app.add_option("--system", o.system,
                 "serve over a system of NPUs (isa/systems/*.json): a package of K\n"
                 "NPU stages runs stage k on device k, a binary is replicated over\n"
                 "every device (default: one NPU of the program's description)")
      ->type_name("SYS.json")
      ->group(group);
  app.add_option("--distinct-inputs", o.distinctInputs,
                 "inputs simulated (request r takes input r mod D; with\n"
                 "--random-input SEED input k is SEED + k); default min(N, 4)")
      ->type_name("D")
      ->group(group)
      ->check(wholeNumber(1, L::maxDistinctInputs));
  app.add_option("--reference", o.reference,
                 "run every distinct input on this whole-model NPU binary too and\n"
                 "require bit-exact outputs")
      ->type_name("BIN.elf")
      ->group(group);
}

} // namespace ember::cli
