// Shared by the e2e scripts: a list of named checks, printed as one JSON object
// on stdout ({"ok": bool, "checks": [{"name", "ok", "detail"}]}); the process
// exits 1 when any check failed. Diagnostics go to stderr.

export class Checks {
  constructor(script) {
    this.script = script;
    this.list = [];
  }

  // check records a named result; detail is any JSON-able value.
  check(name, ok, detail = "") {
    this.list.push({ name, ok: Boolean(ok), detail });
    if (!ok) console.error(`${this.script}: FAIL ${name}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
    return Boolean(ok);
  }

  // step runs fn and records a failure if it throws; returns fn's value or undefined.
  async step(name, fn) {
    try {
      return await fn();
    } catch (err) {
      this.check(name, false, `threw: ${errText(err)}`);
      return undefined;
    }
  }

  finish() {
    const ok = this.list.length > 0 && this.list.every((c) => c.ok);
    process.stdout.write(JSON.stringify({ script: this.script, ok, checks: this.list }) + "\n");
    process.exitCode = ok ? 0 : 1;
  }
}

export function errText(err) {
  if (!err) return String(err);
  const parts = [err.name, err.code !== undefined ? `code=${err.code}` : "", err.message];
  return parts.filter(Boolean).join(" ");
}

// withTimeout rejects when p has not settled within ms.
export function withTimeout(p, ms, what) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// parseArgs reads --key value and --flag arguments.
export function parseArgs(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      out._.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const key = a.slice(2);
      if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) out[key] = argv[++i];
      else out[key] = true;
    } else out._.push(a);
  }
  return out;
}
