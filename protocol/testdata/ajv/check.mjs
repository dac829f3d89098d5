// Compiles every schema of the dataset with Ajv in strict mode (JSON Schema draft 2020-12,
// formats asserted by ajv-formats) and validates lines against them, as a researcher's own
// tools would: node check.mjs SCHEMA_DIR CASES_FILE. CASES_FILE is {"valid": [line, …],
// "invalid": [{"name", "line"}, …]}; each line is validated against the schema its type
// names. Prints {compiled, valid, refused, errors} as JSON; exits 1 when anything is wrong.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [dir, casesFile] = process.argv.slice(2);
const out = { compiled: [], valid: 0, refused: 0, errors: [] };
const ajv = new Ajv2020({
  strict: true,
  allErrors: true,
  // Strict mode throws on what it refuses; what it would only log counts as a fault too.
  logger: {
    log() {},
    warn: (...args) => out.errors.push("Ajv warns: " + args.join(" ")),
    error: (...args) => out.errors.push("Ajv: " + args.join(" ")),
  },
});
addFormats(ajv);

const validators = {};
for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
  const schema = JSON.parse(readFileSync(join(dir, file), "utf8"));
  try {
    validators[file.replace(/\.json$/, "")] = ajv.compile(schema);
    out.compiled.push(schema.$id);
  } catch (e) {
    out.errors.push(`${file} does not compile under Ajv's strict mode: ${e.message}`);
  }
}

const validate = (line) => {
  const doc = JSON.parse(line);
  const v = validators[doc.type];
  if (!v) return [`no schema for type ${JSON.stringify(doc.type)}`];
  return v(doc) ? [] : v.errors.map((e) => `${e.instancePath || "/"} ${e.message}`);
};
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
for (const line of cases.valid) {
  const errs = validate(line);
  if (errs.length) out.errors.push(`${line}\n  refused: ${errs.join("; ")}`);
  else out.valid++;
}
for (const { name, line } of cases.invalid) {
  if (validate(line).length === 0) out.errors.push(`${name}: valid, want refused`);
  else out.refused++;
}
console.log(JSON.stringify(out));
process.exit(out.errors.length ? 1 : 0);
