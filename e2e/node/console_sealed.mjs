// Sealed originals in the console, in real Chromium (issue 28's acceptance),
// against a running `warden serve` with auth, sealing on (trace.seal), and
// the policies of policies/console.yaml beside the built-in pack.
//
//   node console_sealed.mjs --url URL --ops TOKEN --viewer TOKEN --auditor TOKEN --agent TOKEN [--chromium PATH]
//
// The agent asks to send email to bob@external.example (e2e-ask-email asks;
// the trace stores the recipient redacted, the original sealed) and writes
// a card number in an answer (the pack's redact-financial-pii-in-answers
// modifies it). Then:
//   - ops (read, approve) sees the real recipient on the approval's page,
//     on the queue and on the asking decision's page, with the note that
//     the view is recorded; a second ask arriving live on the open queue
//     shows its recipient too;
//   - viewer (read) sees only the redaction on every one of those pages and
//     the decision's diff;
//   - auditor (read, unseal) sees the card number on the - side of the
//     modify's diff and the policy's redaction on the + side;
//   - the unseals list names ops and auditor, the records they saw (linked),
//     from where and via the console; the viewer sees the list, no original.
import { chromium } from "playwright-core";
import { Checks, errText, parseArgs } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2));
const base = args.url;
const c = new Checks("console_sealed");
const T = 15000;
const BOB = "bob@external.example";
const CAROL = "carol@external.example";
const CARD = "4111 1111 1111 1111";
const NOTE = "Originals shown — this view is recorded.";

async function aos(body) {
  const res = await fetch(base + "/aos", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + args.agent },
    body: JSON.stringify(body),
  });
  return res.json();
}

const ctx = (session) => ({ session: { id: session }, agent: { id: "mail-agent" } });

function sendEmail(id, to, session) {
  return {
    jsonrpc: "2.0", id, method: "steps/toolCallRequest",
    params: { toolCallRequest: { executionId: "ex-" + id, toolId: "send_email", inputs: [{ name: "to", value: to }, { name: "subject", value: "Q3 numbers" }] }, context: ctx(session) },
  };
}

function answer(id, text, session) {
  return { jsonrpc: "2.0", id, method: "steps/message", params: { message: { role: "agent", id: "m" + id, content: [{ kind: "text", text }] }, context: ctx(session) } };
}

async function signIn(browser, token, next) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) page.errors.push(m.text()); });
  await page.goto(base + next);
  await page.waitForURL(/\/login\?next=/, { timeout: T });
  await page.fill("#token", token);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login"), { timeout: T }), page.click("#login button[type=submit]")]);
  return page;
}

// text is the inner text of sel's first match, "" when there is none
// (the check that reads it fails, the others still run).
const text = (page, sel) => page.locator(sel).first().innerText({ timeout: 5000 }).catch(() => "");

// appears records whether a locator matches within T.
const appears = (name, loc) => loc.first().waitFor({ timeout: T }).then(() => c.check(name, true), (err) => c.check(name, false, errText(err)));

// html is the page's whole HTML as the browser has it (the DOM, after the
// script ran).
const html = (page) => page.content();

async function run() {
  const s = "sealed-1";
  const asked = await aos(sendEmail(1, BOB, s));
  const approvalId = asked?.result?.data?.approvalId;
  const askRecord = asked?.result?.data?.traceId;
  c.check("AOS: sending email to bob asks, with an approval id and a trace id", approvalId && askRecord, asked);
  const modified = await aos(answer(2, "Paid with your card " + CARD + ".", s));
  const modRecord = modified?.result?.data?.traceId;
  c.check("AOS: the card in the answer is redacted (modify)", modified?.result?.decision === "modify" && modRecord, modified);
  if (!approvalId || !modRecord) return;

  const browser = await chromium.launch({ executablePath: args.chromium || "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    // ops: read and approve.
    const ops = await c.step("ops signs in", () => signIn(browser, args.ops, "/approvals/" + approvalId));
    const summary = await text(ops, "p.lead");
    c.check("approval page (approve): the real recipient", summary.includes(BOB) && !summary.includes("[REDACTED:"), summary);
    c.check("approval page (approve): the note that the view is recorded", (await text(ops, "#originals")).includes(NOTE));
    await ops.goto(base + "/approvals");
    await appears("queue (approve): the pending approval with its recipient", ops.locator("#pending li.pending .summary", { hasText: BOB }));
    // A second ask arrives live while the queue is open: the stream carries
    // it redacted, the page shows its original.
    await ops.locator("#live:not([hidden])").waitFor({ timeout: T }).catch(() => {});
    await ops.waitForFunction(() => document.querySelector("#live-state")?.textContent === "live", null, { timeout: T });
    const second = await aos(sendEmail(3, CAROL, "sealed-2"));
    c.check("AOS: a second ask", second?.result?.data?.approvalId, second);
    await appears("queue (approve): a live ask shows its recipient", ops.locator("#pending li.pending .summary", { hasText: CAROL }));
    await ops.goto(base + "/decisions/" + askRecord);
    c.check("asking decision (approve): the recipient in its input", (await text(ops, "pre.json")).includes(BOB));
    c.check("no script errors on ops's pages", ops.errors.length === 0, ops.errors);

    // viewer: read only.
    const viewer = await c.step("viewer signs in", () => signIn(browser, args.viewer, "/approvals/" + approvalId));
    const vsummary = await text(viewer, "p.lead");
    c.check("approval page (read): only the redaction", vsummary.includes("[REDACTED:email:") && !vsummary.includes(BOB), vsummary);
    for (const p of ["/approvals/" + approvalId, "/approvals", "/decisions/" + askRecord, "/decisions/" + modRecord, "/sessions/" + s, "/decisions?session=" + s, "/decisions?surface=unseal"]) {
      await viewer.goto(base + p);
      await viewer.waitForLoadState("networkidle");
      const h = await html(viewer);
      c.check("read: no original on " + p, ![BOB, CAROL, CARD].some((o) => h.includes(o)) && !h.includes(NOTE), [BOB, CAROL, CARD].filter((o) => h.includes(o)));
    }
    await viewer.goto(base + "/decisions/" + modRecord);
    const vdel = await viewer.locator("pre.diff span.del").allInnerTexts();
    c.check("diff (read): the - side is the redaction", vdel.some((l) => l.includes("[REDACTED:credit_card:")), vdel);

    // auditor: read and unseal.
    const auditor = await c.step("auditor signs in", () => signIn(browser, args.auditor, "/decisions/" + modRecord));
    const del = await auditor.locator("pre.diff span.del").allInnerTexts();
    const ins = await auditor.locator("pre.diff span.ins").allInnerTexts();
    c.check("diff (unseal): the original on the - side", del.some((l) => l.includes("Paid with your card " + CARD)), del);
    c.check("diff (unseal): the modified value on the + side", ins.some((l) => l.includes("[REDACTED:credit_card]") && !l.includes(CARD)), ins);
    c.check("decision (unseal): the note that the view is recorded", (await text(auditor, "#originals")).includes(NOTE));
    if (args.shots) await auditor.screenshot({ path: `${args.shots}/decision-originals.png` });

    // The unseals, listed.
    await auditor.goto(base + "/decisions?surface=unseal");
    const rows = await auditor.locator("#unseals tbody tr[data-id]").allInnerTexts();
    const by = await auditor.locator("#unseals tbody td.f-by").allInnerTexts();
    const links = await auditor.locator("#unseals tbody a.f-record").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    const via = await auditor.locator("#unseals tbody td.f-via").allInnerTexts();
    const from = await auditor.locator("#unseals tbody td.f-from").allInnerTexts();
    c.check("unseals: ops and auditor listed", by.includes("ops") && by.includes("auditor"), rows);
    c.check("unseals: ops's live ask revealed through the approvals API", via.includes("api"), via);
    c.check("unseals: the records seen, linked", links.includes("/decisions/" + askRecord) && links.includes("/decisions/" + modRecord), links);
    c.check("unseals: via the console, from an address", via.includes("console") && from.every((f) => /^127\.0\.0\.1:\d+$/.test(f)), { via, from });
    c.check("unseals: the nav marks Unseals", (await text(auditor, "header nav a.on")) === "Unseals");
    if (args.shots) await auditor.screenshot({ path: `${args.shots}/unseals.png` });
    const h = await html(auditor);
    c.check("unseals: no original in the list", ![BOB, CAROL, CARD].some((o) => h.includes(o)));
    c.check("no script errors on the viewer's and the auditor's pages", viewer.errors.length === 0 && auditor.errors.length === 0, [...viewer.errors, ...auditor.errors]);
  } finally {
    await browser.close();
  }
}

run()
  .catch((err) => c.check("unexpected error", false, errText(err) + "\n" + (err?.stack ?? "")))
  .finally(() => {
    c.finish();
    setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
  });
