// The MCP checks shared by mcp_stdio_client.mjs and mcp_http_client.mjs: an
// official SDK Client, already connected, against @modelcontextprotocol/
// server-everything, directly or through warden with the policies of
// policies/mcp.yaml:
//   - tools/list works and has `echo`; `get-tiny-image` is hidden through warden;
//   - `echo` is allowed and echoes;
//   - `get-env` is denied through warden with warden's own JSON-RPC error
//     -31900 (none of the SDK's ErrorCode values), whose data holds the reason
//     and the trace record id;
//   - a card number in an `echo` result comes back as [REDACTED:credit_card].
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { errText, withTimeout } from "./lib.mjs";

export const HIDDEN_TOOL = "get-tiny-image";
export const DENIED_TOOL = "get-env";
const CARD = "4111 1111 1111 1111";
const T = 15000;
// WARDEN_DENIED is warden's code for a deny (docs/gateways.md).
const WARDEN_DENIED = -31900;

const textOf = (result) => (result?.content ?? []).filter((p) => p.type === "text").map((p) => p.text).join(" ");

export async function runMcpChecks(c, client, { direct }) {
  const listed = await c.step("tools/list", () => withTimeout(client.listTools(), T, "tools/list"));
  if (listed) {
    const names = listed.tools.map((t) => t.name);
    c.check("tools/list has echo", names.includes("echo"), { names });
    if (direct) c.check(`tools/list (direct) has ${HIDDEN_TOOL}`, names.includes(HIDDEN_TOOL), { names });
    else c.check(`tools/list hides ${HIDDEN_TOOL}`, !names.includes(HIDDEN_TOOL) && names.length > 1, { names });
  }

  const echoed = await c.step("call echo", () =>
    withTimeout(client.callTool({ name: "echo", arguments: { message: "hello warden" } }), T, "echo"),
  );
  if (echoed) c.check("call echo: allowed and echoed", !echoed.isError && textOf(echoed) === "Echo: hello warden", echoed);

  let denied = null;
  let deniedErr = null;
  try {
    denied = await withTimeout(client.callTool({ name: DENIED_TOOL, arguments: {} }), T, DENIED_TOOL);
  } catch (err) {
    deniedErr = err;
  }
  if (direct) c.check(`call ${DENIED_TOOL} (direct): answered`, denied && !denied.isError, denied ? { chars: textOf(denied).length } : errText(deniedErr));
  else
  {
    const sdkCodes = Object.values(ErrorCode).filter((v) => typeof v === "number");
    const data = deniedErr?.data ?? {};
    c.check(
      `call ${DENIED_TOOL}: refused with warden's ${WARDEN_DENIED}, none of the SDK's codes, data with the reason and record id`,
      deniedErr?.code === WARDEN_DENIED &&
        !sdkCodes.includes(deniedErr.code) &&
        data.name === "DENIED_BY_WARDEN" &&
        data.reason === "get-env is not allowed (it prints the server environment)" &&
        typeof data.recordId === "string" &&
        data.recordId !== "",
      deniedErr ? { name: deniedErr.name, code: deniedErr.code, message: deniedErr.message, data } : { answered: true, chars: textOf(denied).length },
    );
  }

  const carded = await c.step("call echo with a card number", () =>
    withTimeout(client.callTool({ name: "echo", arguments: { message: `pay with ${CARD} today` } }), T, "echo card"),
  );
  if (carded) {
    const text = textOf(carded);
    if (direct) c.check("echo card (direct): the number comes back", text.includes(CARD), { text });
    else
      c.check(
        "echo card: the result is redacted",
        text.includes("[REDACTED:credit_card]") && !text.includes(CARD) && !text.replace(/\s/g, "").includes("4111111111111111"),
        { text },
      );
  }

  // A call after a denial still works (the session survived the refusal).
  const again = await c.step("call echo after the denial", () =>
    withTimeout(client.callTool({ name: "echo", arguments: { message: "still here" } }), T, "echo again"),
  );
  if (again) c.check("call echo after the denial", textOf(again) === "Echo: still here", again);
}
