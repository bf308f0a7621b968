#!/usr/bin/env node
// ONNX Runtime's latency for bench_cpu.py, through onnxruntime-node (the npm package
// carries ONNX Runtime's CPU library; no Python wheel needed). Not part of any test.
//
//   node ort_bench.js --ort MODULE_DIR --model M.onnx --input X.npy
//        [--threads 1,2] [--iterations N]        one line per thread count:
//     ort-bench threads=T median_ms=.. min_ms=.. cpu_median_ms=.. load_s=..
//   (cpu_median_ms: the process's CPU time per run, process.cpuUsage(); at one thread
//   what the run took on a core, whatever else the host runs)
//   node ort_bench.js --ort MODULE_DIR --model M.onnx --input X.npy --ranges OUT.json
//     runs the model once and writes {input or output name: [min, max]} (calibration of the QDQ
//     export: bench_cpu.py's augmented model has every intermediate value as an output)
//
// Sessions: CPU execution provider, every graph optimisation, sequential execution,
// intra-op threads = T, inter-op threads 1, spinning allowed (ONNX Runtime's default).
// Timed: InferenceSession.run (the public API, input tensor made once), median of N runs
// after 2 warm-up runs.
'use strict';
const fs = require('fs');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}

// A little-endian float32 .npy file (C order) -> {data, shape}.
function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!/'descr':\s*'<f4'/.test(header) || /'fortran_order':\s*True/.test(header))
    throw new Error(path + ': expected little-endian float32 in C order, got ' + header);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim())
                    .filter((s) => s.length).map(Number);
  const bytes = buf.subarray(start);
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return {data, shape};
}

async function main() {
  const ort = require(arg('--ort'));
  const model = arg('--model');
  const x = readNpy(arg('--input'));
  const iterations = Math.max(1, parseInt(arg('--iterations', '10'), 10));
  const ranges = arg('--ranges');
  const threads = ranges ? [1] : arg('--threads', '1,2').split(',').map(Number);
  for (const t of threads) {
    const t0 = process.hrtime.bigint();
    const session = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      intraOpNumThreads: t,
      interOpNumThreads: 1,
    });
    const loadS = Number(process.hrtime.bigint() - t0) / 1e9;
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)};
    if (ranges) {
      const out = await session.run(feeds);
      const r = {};
      for (const [name, v] of Object.entries({...feeds, ...out})) {
        if (v.type !== 'float32' || v.data.length === 0) continue;
        let lo = Infinity, hi = -Infinity;
        for (const e of v.data) {
          if (e < lo) lo = e;
          if (e > hi) hi = e;
        }
        r[name] = [lo, hi];
      }
      fs.writeFileSync(ranges, JSON.stringify(r));
      return;
    }
    for (let w = 0; w < 2; ++w) await session.run(feeds);
    const times = [], cpu = [];
    for (let i = 0; i < iterations; ++i) {
      const r0 = process.hrtime.bigint(), c0 = process.cpuUsage();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - r0) / 1e6);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1e3);
    }
    times.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    console.log(`ort-bench threads=${t} median_ms=${times[times.length >> 1].toFixed(3)} ` +
                `min_ms=${times[0].toFixed(3)} cpu_median_ms=${cpu[cpu.length >> 1].toFixed(3)} load_s=${loadS.toFixed(3)} version=${ort.env.versions ? ort.env.versions.common : '?'}`);
    await session.release();
  }
}

main().catch((e) => {
  console.error('ort_bench.js: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
