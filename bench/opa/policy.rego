# bench/opa/policy.rego: bench/policies (warden's benchmark pack, 17 policies) in Rego v1,
# for OPA's server in bench/compare.sh (OPA=1). Query: POST /v1/data/warden/bench/decision
# with {"input": <an AOS JSON-RPC request>} (bench/requests/tool_call_opa.json). The answer,
# {"result": {"id", "decision", "policy", "reason", "deny", "audit", "modify"}}, echoes the
# request's id (as warden's JSON-RPC answer does) and gives the decision warden's Joch rule
# gives: any enforce-mode deny, else ask, else modify, else allow (warden's default
# decision); audit-mode policies are listed in "audit" and never decide; "policy" is the
# deciding deny by priority, then file order. bench/opa_test.go checks, with WARDEN_OPA set,
# that OPA and warden decide the benchmark request and variations of it alike.
#
# The variables are warden's views of an AOS steps/* request (catalog.Views): tool.name
# from context.agent.tools by toolId (else the toolId), tool.args from the named inputs,
# user.organization (name, else id), session.id, reasoning, and text: every string of
# params except under "context", newline-joined. The detectors are warden's (package
# detect) written as RE2 regular expressions plus the checks Rego can do (Luhn, the IBAN
# checksum, JWT header decoding, SSN ranges, entropy, IP validity).
#
# Where this is NOT exactly warden:
# - Request validation: warden validates every request against the AOS schema and
#   answers JSON-RPC; OPA takes any JSON. warden also writes each decision to its
#   durable trace (SQLite, group commit) before answering; OPA's decision log is off.
# - The views are modelled for AOS steps/* only. The five policies for other events
#   (MCP, hooks, steps/message, retrievals, memory) are here with their event lists and
#   are evaluated up to that check; for steps/message the message is role + content
#   text (parts' text not joined as warden's partsMessage does); direction is "" (steps);
#   tool.server is "" (an AOS request has no MCP server).
# - Detectors are regexes, not warden's scanners (each behind a cheap prefilter, a
#   contains() or a short regex, as warden's are behind theirs): boundary rules, GitHub
#   tokens over 255 and assignment values over 512 characters, the 64-byte local part
#   and ".." rule of emails, card windows inside longer digit runs, phone group rules
#   and a few corner cases differ; each finds the same kinds on ordinary text
#   (bench/opa_test.go's variations). Regex matches are leftmost and non-overlapping.
# - Entropy (api_key assignments): log2 from a table of 1..520 (values are at most
#   512+3 bytes), so the 3.0-bit threshold is computed, not approximated, to 1e-6.
# - injection(): the phrase patterns of detect/phrases.go, each compiled to one regex
#   (generated: `go test ./bench -run TestOPAPhrases -update-opa`, and that test fails
#   when detect/phrases.go changes without regenerating); a phrase occurrence counts
#   once per non-overlapping match (warden: once per starting word); the separator
#   limit (24) counts runes, not bytes; the hidden-character signals are counted over
#   the whole string (zero-width runs and counts, tag characters, bidi controls) but
#   warden's exceptions (a leading byte-order mark, joiners inside emoji or complex
#   scripts, tags of an emoji flag) are not modelled, and the phrases are matched
#   again on the text without zero-width and bidi characters but tag characters are
#   not decoded to the ASCII they mirror.
# - A duplicated input name is a conflict (an evaluation error) here; warden keeps the
#   last. A CEL run-time error (a map where a string is expected) is a deny in warden
#   (failure policy closed); here the condition is just false.
#
# OPA caches at most 100 compiled regexes (topdown regexCacheMaxSize): this file uses
# fewer than 70 distinct patterns, so none is compiled per request.
package warden.bench

import rego.v1

# ---- the views ---------------------------------------------------------------------

event := input.method

params := p if {
	p := input.params
	is_object(p)
} else := {}

ctx := c if {
	c := params.context
	is_object(c)
} else := {}

str(x) := x if is_string(x)

else := ""

session_id := str(object.get(ctx, ["session", "id"], ""))

user_organization := n if {
	n := str(object.get(ctx, ["user", "organization", "name"], ""))
	n != ""
} else := str(object.get(ctx, ["user", "organization", "id"], ""))

reasoning := str(object.get(params, "reasoning", ""))

tool_call := t if {
	event == "steps/toolCallRequest"
	t := params.toolCallRequest
	is_object(t)
} else := {}

tool_id := str(object.get(tool_call, "toolId", ""))

tool_names := [n |
	some t in object.get(ctx, ["agent", "tools"], [])
	n := str(object.get(t, "name", ""))
	n != ""
	object.get(t, "id", null) == tool_id
]

tool_name := tool_names[0] if {
	count(tool_names) > 0
} else := tool_id

tool_args := {n: v |
	some i in object.get(tool_call, "inputs", [])
	n := i.name
	is_string(n)
	v := object.get(i, "value", null)
}

tool_server := ""

direction := ""

message_role := str(object.get(params, ["message", "role"], "")) if event == "steps/message"

else := ""

message_text := str(object.get(params, ["message", "content"], "")) if event == "steps/message"

else := ""

# text: every string in params except under "context", newline-joined, keys in order.
text := concat("\n", [s |
	some k in sort(object.keys(params))
	k != "context"
	walk(params[k], [_, s])
	is_string(s)
])

# ---- events ------------------------------------------------------------------------

on(events) if glob.match(events[_], [], event)

# ---- the policies, in file order (context, data, injection, tools) ------------------
# Each is a result {id, decision, mode, priority, order, reason}; order is the file order
# (warden's tie-break).

results contains r if {
	on(["steps/toolCallRequest"])
	session_id == ""
	r := res("tool-calls-need-session", "deny", 0, 0, "tool call without a session id")
}

results contains r if {
	on(["protocols/MCP", "tool.pre_call"])
	tool_server != ""
	not glob.match("internal-*", [], tool_server)
	not tool_server in {"everything", "calendar"}
	r := res("trusted-mcp-servers", "deny", 5, 1, sprintf("MCP server %s is not on the allow-list", [tool_server]))
}

results contains r if {
	on(["steps/memoryStore"])
	count(text_secrets) > 0
	r := res("memory-store-no-secrets", "deny", 0, 2, "secret in memory write")
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call", "protocols/MCP"])
	count(text_secrets) > 0
	r := res("no-secrets-in-tool-args", "deny", 0, 3, sprintf("credentials in tool call: %s", [concat(", ", sort(text_secrets))]))
}

results contains r if {
	on(["steps/*", "protocols/*"])
	"credit_card" in text_pii
	r := res("redact-credit-cards", "modify", 30, 4, "credit card number redacted")
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call"])
	glob.match("crm_*", [], tool_name)
	count(text_pii) > 0
	r := res("crm-pii-minimisation", "modify", 30, 5, "contact details redacted before the CRM call")
}

results contains r if {
	on(["steps/*"])
	count(reasoning_pii) > 0
	r := audit("audit-pii-in-reasoning", "deny", 90, 6, "personal data in agent reasoning")
}

results contains r if {
	on(["steps/toolCallResult", "tool.post_call", "protocols/MCP"])
	direction != "outbound"
	text_injection >= 0.5
	r := res("tool-result-injection", "deny", 0, 7, "prompt injection in tool result")
}

results contains r if {
	on(["steps/message", "input.pre_submit"])
	message_role == "user"
	injection(message_text) >= 0.8
	r := res("user-prompt-injection", "deny", 0, 8, "prompt injection in user message")
}

results contains r if {
	on(["steps/knowledgeRetrieval", "steps/memoryContextRetrieval"])
	text_injection >= 0.5
	r := res("retrieval-injection", "deny", 0, 9, "prompt injection in retrieved content")
}

results contains r if {
	on(["steps/toolCallRequest"])
	reasoning_injection >= 0.3
	r := audit("reasoning-injection-audit", "deny", 90, 10, "reasoning looks injected")
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call", "protocols/MCP"])
	tool_name in {"delete_database", "drop_database", "drop_table"}
	r := res("deny-delete-database", "deny", 0, 11, "destructive database operations are not allowed for agents")
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call", "protocols/MCP"])
	tool_name == "send_email"
	to := tool_args.to
	not endswith(sprintf("%v", [to]), "@acme.com")
	r := res("no-external-email", "deny", 10, 12, sprintf("external email to %v requires approval", [to]))
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call", "protocols/MCP"])
	tool_name in {"run_shell", "bash", "exec_command"}
	cmd := tool_args.command
	regex.match(`rm\s+-[a-zA-Z]*r[a-zA-Z]*f?\s+/|curl[^|]*\|\s*(ba)?sh`, sprintf("%v", [cmd]))
	r := res("no-destructive-shell", "deny", 5, 13, "destructive or remote-code shell command")
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call"])
	tool_name in {"transfer_funds", "refund_payment", "create_invoice"}
	user_organization != "Acme"
	r := res("payments-only-for-acme-users", "deny", 10, 14, "payment tools are restricted to Acme users")
}

results contains r if {
	on(["steps/toolCallRequest", "tool.pre_call"])
	glob.match("*_calendar", [], tool_name)
	to_number(tool_args.max_results) > 500
	r := res("calendar-result-cap", "deny", 20, 15, "max_results above 500")
}

results contains r if {
	on(["steps/toolCallRequest"])
	glob.match("search_*", [], tool_name)
	r := audit("shadow-review-search-tools", "deny", 50, 16, "search tools will require approval (shadow mode)")
}

res(id, d, prio, order, reason) := {"id": id, "decision": d, "mode": "enforce", "priority": prio, "order": order, "reason": reason}

audit(id, d, prio, order, reason) := {"id": id, "decision": d, "mode": "audit", "priority": prio, "order": order, "reason": reason}

# ---- combining: deny beats ask beats modify beats allow; audit never decides ---------

enforced(d) := [r | some r in results; r.mode == "enforce"; r.decision == d]

by_rank(rs) := [r | some k in sort([[x.priority, x.order] | some x in rs]); some r in rs; [r.priority, r.order] == k]

outcome := "deny" if {
	count(enforced("deny")) > 0
} else := "ask" if {
	count(enforced("ask")) > 0
} else := "modify" if {
	count(enforced("modify")) > 0
} else := "allow"

deciding := by_rank(enforced(outcome))

decision := {
	"id": object.get(input, "id", null),
	"decision": outcome,
	"policy": deciding_policy,
	"reason": reason,
	"deny": [r.id | some r in by_rank(enforced("deny"))],
	"modify": [r.id | some r in by_rank(enforced("modify"))],
	"audit": [r.id | some r in by_rank([x | some x in results; x.mode == "audit"])],
}

deciding_policy := deciding[0].id if {
	count(deciding) > 0
} else := ""

reason := concat("; ", [r.reason | some r in deciding]) if outcome == "modify"

else := deciding[0].reason if count(deciding) > 0

else := "allowed"

# ---- detectors: secrets() ----------------------------------------------------------

text_secrets := secrets(text)

secrets(s) := {k | some k in ["api_key", "aws_access_key", "github_token", "jwt", "private_key"]; secret(k, s)}

secret("private_key", s) if {
	contains(s, "-----BEGIN ")
	regex.match(`-----BEGIN [^\r\n-]{0,48}PRIVATE KEY[^\r\n-]{0,48}-----`, s)
}

secret("aws_access_key", s) if regex.match(`(?:^|[^A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA|APKA)[A-Z0-9]{16}(?:[^A-Za-z0-9]|$)`, s)

secret("github_token", s) if {
	contains(s, "_")
	regex.match(`(?:^|[^A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?:[^A-Za-z0-9_]|$)`, s)
}

# A JWT: three base64url segments whose first decodes to a JSON object with "alg".
secret("jwt", s) if {
	contains(s, "eyJ")
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_.-])(eyJ[A-Za-z0-9_-]*)\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*`, s, -1)
	h := json.unmarshal(base64url.decode(m[1]))
	is_string(h.alg)
}

secret("api_key", s) if {
	regex.match(`sk-|xox`, s)
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_-])(?:sk-([A-Za-z0-9_-]{20,})|xox[baprs]-([A-Za-z0-9-]{10,}))(?:[^A-Za-z0-9_]|$)`, s, -1)
	mixed(concat("", [m[1], m[2]]))
}

secret("api_key", s) if {
	regex.match(`AIza|k_live_|k_test_`, s)
	regex.match(`(?:^|[^A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?:[^A-Za-z0-9_-]|$)|(?:^|[^A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}(?:[^A-Za-z0-9_]|$)`, s)
}

# Assignments (api_key=…, "apiKey": "…", Authorization: Bearer …) whose value is 16+
# characters, letters and digits mixed, of at least 3 bits of entropy a byte.
secret("api_key", s) if {
	some m in regex.find_all_string_submatch_n(`(?i)(?:api[_-]?key|secret(?:[_-]?key)?|access[_-]?key|token|authorization)["']? {0,3}(?:=>?|:)[ \t]{0,3}["']?(?:bearer |token |basic )?([A-Za-z0-9_+/.~-]{16,}={0,3})`, s, -1)
	v := trim_right(m[1], ".")
	count(v) >= 16
	count(v) <= 515
	mixed(v)
	entropy(v) >= 3.0
}

mixed(v) if {
	regex.match(`[0-9]`, v)
	regex.match(`[A-Za-z]`, v)
}

# Shannon entropy in bits a byte: log2(n) - Σ c·log2(c) / n over the byte counts c.
entropy(v) := e if {
	chars := split(v, "")
	n := count(chars)
	counts := {c: k | some c in chars; k := count([x | some x in chars; x == c])}
	e := log2[n] - (sum([t | some k in counts; t := k * log2[k]]) / n)
}

# ---- detectors: pii() --------------------------------------------------------------

text_pii := pii(text)

reasoning_pii := pii(reasoning)

pii(s) := {k | some k in ["credit_card", "email", "iban", "ip_address", "phone", "ssn"]; pii_kind(k, s)}

pii_kind("email", s) if {
	contains(s, "@")
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9._%+'-])[A-Za-z0-9_%+'-](?:[A-Za-z0-9._%+'-]{0,62}[A-Za-z0-9_%+'-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?:[^A-Za-z0-9_@.-]|[.-][^A-Za-z0-9]|[.-]?$)`, s, -1)
	not lower(m[1]) in {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico"}
}

# Cards: 13-19 digits, grouped by spaces or dashes, a plausible issuer, Luhn.
pii_kind("credit_card", s) if {
	regex.match(`[0-9]{4}`, s)
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_+.,/:-])([0-9]{3,19}(?:[ -][0-9]{3,19}){0,7})(?:[^A-Za-z0-9_]|[.,/:-][^0-9]|[.,/:-]?$)`, s, -1)
	d := replace(replace(m[1], " ", ""), "-", "")
	count(d) >= 13
	count(d) <= 19
	iin(to_number(substring(d, 0, 4)), count(d))
	luhn(d)
}

luhn(d) if {
	digits := [to_number(c) | some c in split(d, "")]
	n := count(digits)
	sum([luhn_digit(x, (n - 1) - i) | some i, x in digits]) % 10 == 0
}

luhn_digit(x, pos) := x if pos % 2 == 0

else := y if {
	y := x * 2
	y <= 9
} else := (x * 2) - 9

iin(p4, n) if {
	floor(p4 / 1000) == 4
	n in {13, 16, 19}
}

iin(p4, 15) if floor(p4 / 100) in {34, 37}

iin(p4, 16) if {
	p2 := floor(p4 / 100)
	p2 >= 51
	p2 <= 55
}

iin(p4, 16) if {
	p4 >= 2221
	p4 <= 2720
}

iin(p4, n) if {
	p4 >= 3528
	p4 <= 3589
	n >= 16
}

iin(p4, n) if {
	p3 := floor(p4 / 10)
	p3 >= 300
	p3 <= 305
	n >= 14
}

iin(p4, n) if {
	floor(p4 / 100) in {36, 38, 39}
	n >= 14
}

iin(p4, _) if floor(p4 / 1000) == 6

iin(p4, _) if floor(p4 / 100) in {50, 56, 57, 58}

# IBAN: country, check digits, 11-30 alphanumerics (groups of four may be spaced);
# valid when the rearranged number mod 97 is 1.
pii_kind("iban", s) if {
	regex.match(`[A-Z]{2}[0-9]{2}`, s)
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9])([A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)(?:[^A-Za-z0-9]|$)`, s, -1)
	c := replace(m[1], " ", "")
	count(c) >= 15
	count(c) <= 34
	r := concat("", [substring(c, 4, -1), substring(c, 0, 4)])
	num := concat("", [iban_digit(x) | some x in split(r, "")])
	to_number(num) % 97 == 1
}

iban_digit(x) := x if regex.match(`^[0-9]$`, x)

else := format_int(indexof("ABCDEFGHIJKLMNOPQRSTUVWXYZ", x) + 10, 10)

pii_kind("ssn", s) if {
	regex.match(`[0-9]{3}-[0-9]{2}-[0-9]{4}`, s)
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_+.,/:-])([0-9]{3})-([0-9]{2})-([0-9]{4})(?:[^A-Za-z0-9_]|[.,/:-][^0-9]|[.,/:-]?$)`, s, -1)
	not m[1] in {"000", "666"}
	not startswith(m[1], "9")
	m[2] != "00"
	m[3] != "0000"
}

pii_kind("ip_address", s) if {
	regex.match(`[0-9]\.[0-9]{1,3}\.[0-9]`, s)
	regex.match(`(?:^|[^A-Za-z0-9_.])(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:[^A-Za-z0-9_.-]|[.-][^A-Za-z0-9]|[.-]?$)`, s)
}

pii_kind("ip_address", s) if {
	regex.match(`[0-9A-Fa-f]?:[0-9A-Fa-f]*:`, s)
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_.])([0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*[0-9A-Fa-f])(?:[^A-Za-z0-9_]|$)`, s, -1)
	regex.match(`[0-9]`, m[1])
	net.cidr_is_valid(concat("", [m[1], "/128"]))
}

# Phones: "+CC …" with 7-15 digits; NANP [1] NXX NXX XXXX; trunk-prefixed national
# numbers (0…, 9-11 digits, no dots).
pii_kind("phone", s) if {
	contains(s, "+")
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_])\+([0-9]{1,12}(?:[ .-]?\(?[0-9]{1,12}\)?){0,7})(?:[^A-Za-z0-9_]|[.,/:-][^0-9]|[.,/:-]?$)`, s, -1)
	d := regex.replace(m[1], `[^0-9]`, "")
	count(d) >= 7
	count(d) <= 15
}

pii_kind("phone", s) if {
	regex.match(`[0-9]{3}[ .)-]+[0-9]{3}[ .-][0-9]{4}`, s)
	regex.match(`(?:^|[^A-Za-z0-9_+.,/:-])(?:1[ -])?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ -])[2-9][0-9]{2}[ -][0-9]{4}(?:[^A-Za-z0-9_]|[.,/:-][^0-9]|[.,/:-]?$)|(?:^|[^A-Za-z0-9_+.,/:-])(?:1\.)?[2-9][0-9]{2}\.[2-9][0-9]{2}\.[0-9]{4}(?:[^A-Za-z0-9_.]|\.[^0-9]|\.?$)`, s)
}

pii_kind("phone", s) if {
	regex.match(`(?:^|[^0-9])0[0-9]{0,7}[ -][0-9]{2}`, s)
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_+.,/:-])(0[0-9]{0,7}(?:[ -][0-9]{2,8}){1,7})(?:[^A-Za-z0-9_]|[.,/:-][^0-9]|[.,/:-]?$)`, s, -1)
	d := regex.replace(m[1], `[^0-9]`, "")
	count(d) >= 9
	count(d) <= 11
}

# ---- detectors: injection() --------------------------------------------------------

text_injection := injection(text)

reasoning_injection := injection(reasoning)

# 1 - Π(1-w) over the phrases found and the hidden-character signals.
injection(s) := 1 - (phrases_keep(s) * hidden_keep(s)) if {
	regex.match(hidden_re, s)
} else := 1 - phrases_keep(s)

phrases_keep(s) := min({phrase_keep(s), phrase_keep(regex.replace(s, `[\x{200B}-\x{200D}\x{2060}\x{FEFF}\x{202A}-\x{202E}\x{2066}-\x{2069}]`, ""))}) if {
	regex.match(hidden_re, s)
} else := phrase_keep(s)

# The anchor regex (a phrase's first word) guards the phrase regexes, as warden's
# per-word filter guards its phrase matcher.
phrase_keep(s) := product([k |
	some p in injection_phrases
	some _ in regex.find_n(p.re, s, -1)
	k := 1 - p.w
]) if {
	regex.match(injection_anchor, s)
} else := 1

hidden_re := `[\x{200B}-\x{200D}\x{2060}\x{FEFF}\x{202A}-\x{202E}\x{2066}-\x{2069}\x{E0000}-\x{E007F}]`

hidden_keep(s) := ((1 - tag_weight(count(regex.find_n(`[\x{E0000}-\x{E007F}]`, s, -1)))) * (1 - zw_weight(s))) * (1 - bidi_weight(count(regex.find_n(`[\x{202D}\x{202E}]`, s, -1)), count(regex.find_n(`[\x{202A}-\x{202C}\x{2066}-\x{2069}]`, s, -1))))

tag_weight(n) := 0.9 if n >= 4

else := 0.6 if n > 0

else := 0

zw_weight(s) := max({zw_run_weight(max({0} | {count(r) | some r in regex.find_n(`[\x{200B}-\x{200D}\x{2060}\x{FEFF}]+`, s, -1)})), zw_count_weight(count(regex.find_n(`[\x{200B}-\x{200D}\x{2060}\x{FEFF}]`, s, -1)))})

# the longest run of zero-width characters (count of a string counts its characters)
zw_run_weight(n) := 0.75 if n >= 4

else := 0.6 if n >= 2

else := 0

zw_count_weight(n) := 0.75 if n >= 8

else := 0.5 + (0.05 * (n - 3)) if n >= 3

else := 0.1 * n

bidi_weight(overrides, embeds) := 0.8 if overrides + embeds >= 3

else := 0.7 if overrides > 0

else := 0.5 if embeds > 0

else := 0

# BEGIN generated phrases: go test ./bench -run TestOPAPhrases -update-opa
injection_anchor := `(?i)(?:^|[^A-Za-z0-9])(?:ignore|disregard|forget|skip|bypass|override|overlook|neglect|drop|discard|abandon|circumvent|overwrite|reset|disable|evade|new|real|actual|true|secret|hidden|you|youre|reveal|print|output|repeat|display|leak|show|dump|disclose|expose|divulge|recite|spell|regurgitate|share|echo|tell|give|write|return|paste|what|whats|act|behave|respond|operate|roleplay|role|play|pretend|developer|dev|god|(?-i:DAN)|jailbreak|unrestricted|unfiltered|enable|activate|enter|engage|unlock|switch|turn|from|do|jailbroken|jailbreaking|jailbroke|without|no|im|endoftext)(?:[^A-Za-z0-9]|$)`

injection_phrases := [
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:ignore|disregard|forget|skip|bypass|override|overlook|neglect|drop|discard|abandon)(?:[^A-Za-z0-9]{1,24}(?:all|any|the|of|and|these|those|my|your|every|everything|earlier|other)){0,4}[^A-Za-z0-9]{1,24}(?:previous|prior|above|earlier|preceding|former|foregoing|original|initial|past|old|existing|current|given)(?:[^A-Za-z0-9]{1,24}(?:system|safety|developer|user|all|the|and|of|your|my|these|those|given|above|instructions)){0,4}[^A-Za-z0-9]{1,24}(?:instructions|instruction|prompt|prompts|directions|directives|rules|guidelines|commands|context|orders|constraints|programming|guidance|restrictions|guardrails)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:ignore|disregard|forget|bypass|override|overlook|abandon|discard|drop|circumvent|overwrite|reset)(?:[^A-Za-z0-9]{1,24}(?:all|of|the)){0,4}[^A-Za-z0-9]{1,24}(?:your)(?:[^A-Za-z0-9]{1,24}(?:system|safety|ethical|content|original|initial|core|current|existing|previous|prior|own|built|in|default|moral|internal|hidden)){0,4}[^A-Za-z0-9]{1,24}(?:instructions|instruction|prompt|prompts|rules|guidelines|programming|training|restrictions|constraints|directives|policies|filters|safeguards|principles|limitations|guardrails|protocols|conditioning)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:ignore|disregard|bypass|override|circumvent|disable|evade)(?:[^A-Za-z0-9]{1,24}(?:the|all|any|of)){0,4}[^A-Za-z0-9]{1,24}(?:safety|content|ethical|moral|system|security)[^A-Za-z0-9]{1,24}(?:filters|filter|safeguards|guardrails|restrictions|guidelines|rules|policies|policy|protocols|prompt|instructions|moderation)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:forget|ignore|disregard)[^A-Za-z0-9]{1,24}(?:everything|anything|all)[^A-Za-z0-9]{1,24}(?:you)(?:[^A-Za-z0-9]{1,24}(?:were|have|ve|had|been|was|previously|just|being)){0,4}[^A-Za-z0-9]{1,24}(?:told|taught|instructed|given|learned|said)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:forget|ignore|disregard)[^A-Za-z0-9]{1,24}(?:everything|anything)[^A-Za-z0-9]{1,24}(?:above|before|previously|prior|earlier|preceding)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:ignore|disregard)[^A-Za-z0-9]{1,24}(?:the|all)[^A-Za-z0-9]{1,24}(?:above|foregoing)[^A-Za-z0-9]{1,24}(?:and|then|instead)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:new|real|actual|true|secret|hidden)(?:[^A-Za-z0-9]{1,24}(?:system))?[^A-Za-z0-9]{1,24}(?:instructions|instruction|prompt|directives|task)[ \t]*:`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:you|youre)[^A-Za-z0-9]{1,24}(?:are|re)[^A-Za-z0-9]{1,24}(?:not|no)[^A-Za-z0-9]{1,24}(?:longer)[^A-Za-z0-9]{1,24}(?:bound|restricted|constrained|obligated|obliged|beholden)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:you|youre)[^A-Za-z0-9]{1,24}(?:are|re)[^A-Za-z0-9]{1,24}(?:no)[^A-Za-z0-9]{1,24}(?:longer)[^A-Za-z0-9]{1,24}(?:required|supposed|obligated|forced|expected|programmed|need)[^A-Za-z0-9]{1,24}(?:to)[^A-Za-z0-9]{1,24}(?:follow|obey|comply|adhere|respect)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:you|youre)[^A-Za-z0-9]{1,24}(?:are|re)[^A-Za-z0-9]{1,24}(?:now)[^A-Za-z0-9]{1,24}(?:free|freed)[^A-Za-z0-9]{1,24}(?:from|of)(?:[^A-Za-z0-9]{1,24}(?:all|any|your|the)){0,4}[^A-Za-z0-9]{1,24}(?:restrictions|rules|guidelines|constraints|limitations|filters|censorship|programming|policies)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:reveal|print|output|repeat|display|leak|show|dump|disclose|expose|divulge|recite|spell|regurgitate)(?:[^A-Za-z0-9]{1,24}(?:me|us|out))?[^A-Za-z0-9]{1,24}(?:your|the)(?:[^A-Za-z0-9]{1,24}(?:full|entire|complete|exact|verbatim|whole|above)){0,4}[^A-Za-z0-9]{1,24}(?:system|initial|hidden|secret|confidential|internal|preceding)(?:[^A-Za-z0-9]{1,24}(?:full|entire|complete|exact|verbatim|whole)){0,4}[^A-Za-z0-9]{1,24}(?:prompt|prompts|instructions|message|directives|guidelines|rules)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:reveal|print|output|repeat|display|leak|show|dump|disclose|expose|share|divulge|recite|echo|tell|give|write|return|paste|spell|regurgitate)(?:[^A-Za-z0-9]{1,24}(?:me|us|out))?[^A-Za-z0-9]{1,24}(?:your)(?:[^A-Za-z0-9]{1,24}(?:full|entire|complete|exact|verbatim|whole)){0,4}[^A-Za-z0-9]{1,24}(?:prompt|prompts)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:reveal|print|output|repeat|dump|leak|disclose|divulge|recite|regurgitate)(?:[^A-Za-z0-9]{1,24}(?:me|us|out))?[^A-Za-z0-9]{1,24}(?:your)(?:[^A-Za-z0-9]{1,24}(?:full|entire|complete|exact|verbatim|whole)){0,4}[^A-Za-z0-9]{1,24}(?:instructions|directives|programming)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:what|whats)[^A-Za-z0-9]{1,24}(?:is|was|were|are)[^A-Za-z0-9]{1,24}(?:your)[^A-Za-z0-9]{1,24}(?:system|initial|original|hidden|secret)[^A-Za-z0-9]{1,24}(?:prompt|instructions)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:you|youre)[^A-Za-z0-9]{1,24}(?:are|re)[^A-Za-z0-9]{1,24}(?:now)(?:[^A-Za-z0-9]{1,24}(?:a|an|the|in))?[^A-Za-z0-9]{1,24}(?:(?-i:DAN)|jailbroken|unrestricted|unfiltered|uncensored|unchained|unleashed|amoral|unlocked|limitless|unbound)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:you|youre)[^A-Za-z0-9]{1,24}(?:are|re)[^A-Za-z0-9]{1,24}(?:now)(?:[^A-Za-z0-9]{1,24}(?:in))?[^A-Za-z0-9]{1,24}(?:developer|dev|god|(?-i:DAN)|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil)[^A-Za-z0-9]{1,24}(?:mode)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:act|behave|respond|operate|roleplay|role|play)[^A-Za-z0-9]{1,24}(?:as|like)(?:[^A-Za-z0-9]{1,24}(?:a|an|the))?[^A-Za-z0-9]{1,24}(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unlimited|rogue|unethical|unchained|unbound|unaligned|(?-i:DAN))(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:act|behave|respond|operate)(?:[^A-Za-z0-9]{1,24}(?:as|like))?[^A-Za-z0-9]{1,24}(?:if|though)[^A-Za-z0-9]{1,24}(?:you|youre)[^A-Za-z0-9]{1,24}(?:have|had|are|were|re)(?:[^A-Za-z0-9]{1,24}(?:no|without|zero|free|from|of|any|never|had)){0,4}[^A-Za-z0-9]{1,24}(?:restrictions|limits|limitations|rules|filters|guidelines|boundaries|constraints|censorship|morals|ethics|guardrails|safeguards|policies|restraints)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:pretend)(?:[^A-Za-z0-9]{1,24}(?:that))?[^A-Za-z0-9]{1,24}(?:you|youre)[^A-Za-z0-9]{1,24}(?:have|had|are|were|re)(?:[^A-Za-z0-9]{1,24}(?:no|without|zero|free|from|of|any|never)){0,4}[^A-Za-z0-9]{1,24}(?:restrictions|limits|limitations|rules|filters|guidelines|boundaries|constraints|censorship|morals|ethics|guardrails|safeguards|policies|restraints)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:pretend)(?:[^A-Za-z0-9]{1,24}(?:to|that|you|are|re|were|be|a|an|the)){0,4}[^A-Za-z0-9]{1,24}(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical|rogue|unaligned|(?-i:DAN))(?:[^A-Za-z0-9]|$)`},
	{"w": 0.55, "re": `(?i)(?:^|[^A-Za-z0-9])(?:developer|dev|god|(?-i:DAN)|jailbreak|unrestricted|unfiltered)[^A-Za-z0-9]{1,24}(?:mode)[^A-Za-z0-9]{1,24}(?:enabled|activated|on|engaged|unlocked|active)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:enable|activate|enter|engage|unlock|switch|turn)(?:[^A-Za-z0-9]{1,24}(?:to|into|on)){0,4}[^A-Za-z0-9]{1,24}(?:(?-i:DAN)|god|jailbreak|unrestricted|unfiltered)[^A-Za-z0-9]{1,24}(?:mode)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.25, "re": `(?i)(?:^|[^A-Za-z0-9])(?:enable|activate|enter|engage|unlock|switch|turn)(?:[^A-Za-z0-9]{1,24}(?:to|into|on)){0,4}[^A-Za-z0-9]{1,24}(?:developer|dev)[^A-Za-z0-9]{1,24}(?:mode)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.5, "re": `(?i)(?:^|[^A-Za-z0-9])(?:from)[^A-Za-z0-9]{1,24}(?:now)[^A-Za-z0-9]{1,24}(?:on)[^A-Za-z0-9]{1,24}(?:you|youll)[^A-Za-z0-9]{1,24}(?:will|are|must|shall|should|ll|re|act|respond|answer|reply|only|always|never|have)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:do)[^A-Za-z0-9]{1,24}(?:anything)[^A-Za-z0-9]{1,24}(?:now)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.6, "re": `(?i)(?:^|[^A-Za-z0-9])(?:(?-i:DAN))[^A-Za-z0-9]{1,24}(?:mode|prompt)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.2, "re": `(?i)(?:^|[^A-Za-z0-9])(?:jailbreak|jailbroken|jailbreaking|jailbroke)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.2, "re": `(?i)(?:^|[^A-Za-z0-9])(?:without|no)(?:[^A-Za-z0-9]{1,24}(?:any|all))?[^A-Za-z0-9]{1,24}(?:restrictions|filters|censorship|limitations|guardrails|safeguards)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.4, "re": `(?i)(?:^|[^A-Za-z0-9])(?:im)[^A-Za-z0-9]{1,24}(?:start|end|sep)(?:[^A-Za-z0-9]|$)`},
	{"w": 0.4, "re": `(?i)(?:^|[^A-Za-z0-9])(?:endoftext)(?:[^A-Za-z0-9]|$)`},
]

# END generated phrases

# BEGIN generated log2: go test ./bench -run TestOPAPhrases -update-opa
log2 := [
	0, 0, 1, 1.584963, 2, 2.321928, 2.584963, 2.807355, 3, 3.169925,
	3.321928, 3.459432, 3.584963, 3.70044, 3.807355, 3.906891, 4, 4.087463, 4.169925, 4.247928,
	4.321928, 4.392317, 4.459432, 4.523562, 4.584963, 4.643856, 4.70044, 4.754888, 4.807355, 4.857981,
	4.906891, 4.954196, 5, 5.044394, 5.087463, 5.129283, 5.169925, 5.209453, 5.247928, 5.285402,
	5.321928, 5.357552, 5.392317, 5.426265, 5.459432, 5.491853, 5.523562, 5.554589, 5.584963, 5.61471,
	5.643856, 5.672425, 5.70044, 5.72792, 5.754888, 5.78136, 5.807355, 5.83289, 5.857981, 5.882643,
	5.906891, 5.930737, 5.954196, 5.97728, 6, 6.022368, 6.044394, 6.066089, 6.087463, 6.108524,
	6.129283, 6.149747, 6.169925, 6.189825, 6.209453, 6.228819, 6.247928, 6.266787, 6.285402, 6.303781,
	6.321928, 6.33985, 6.357552, 6.375039, 6.392317, 6.409391, 6.426265, 6.442943, 6.459432, 6.475733,
	6.491853, 6.507795, 6.523562, 6.539159, 6.554589, 6.569856, 6.584963, 6.599913, 6.61471, 6.629357,
	6.643856, 6.658211, 6.672425, 6.686501, 6.70044, 6.714246, 6.72792, 6.741467, 6.754888, 6.768184,
	6.78136, 6.794416, 6.807355, 6.820179, 6.83289, 6.84549, 6.857981, 6.870365, 6.882643, 6.894818,
	6.906891, 6.918863, 6.930737, 6.942515, 6.954196, 6.965784, 6.97728, 6.988685, 7, 7.011227,
	7.022368, 7.033423, 7.044394, 7.055282, 7.066089, 7.076816, 7.087463, 7.098032, 7.108524, 7.118941,
	7.129283, 7.139551, 7.149747, 7.159871, 7.169925, 7.179909, 7.189825, 7.199672, 7.209453, 7.219169,
	7.228819, 7.238405, 7.247928, 7.257388, 7.266787, 7.276124, 7.285402, 7.294621, 7.303781, 7.312883,
	7.321928, 7.330917, 7.33985, 7.348728, 7.357552, 7.366322, 7.375039, 7.383704, 7.392317, 7.400879,
	7.409391, 7.417853, 7.426265, 7.434628, 7.442943, 7.451211, 7.459432, 7.467606, 7.475733, 7.483816,
	7.491853, 7.499846, 7.507795, 7.5157, 7.523562, 7.531381, 7.539159, 7.546894, 7.554589, 7.562242,
	7.569856, 7.577429, 7.584963, 7.592457, 7.599913, 7.60733, 7.61471, 7.622052, 7.629357, 7.636625,
	7.643856, 7.651052, 7.658211, 7.665336, 7.672425, 7.67948, 7.686501, 7.693487, 7.70044, 7.707359,
	7.714246, 7.721099, 7.72792, 7.73471, 7.741467, 7.748193, 7.754888, 7.761551, 7.768184, 7.774787,
	7.78136, 7.787903, 7.794416, 7.8009, 7.807355, 7.813781, 7.820179, 7.826548, 7.83289, 7.839204,
	7.84549, 7.851749, 7.857981, 7.864186, 7.870365, 7.876517, 7.882643, 7.888743, 7.894818, 7.900867,
	7.906891, 7.912889, 7.918863, 7.924813, 7.930737, 7.936638, 7.942515, 7.948367, 7.954196, 7.960002,
	7.965784, 7.971544, 7.97728, 7.982994, 7.988685, 7.994353, 8, 8.005625, 8.011227, 8.016808,
	8.022368, 8.027906, 8.033423, 8.038919, 8.044394, 8.049849, 8.055282, 8.060696, 8.066089, 8.071462,
	8.076816, 8.082149, 8.087463, 8.092757, 8.098032, 8.103288, 8.108524, 8.113742, 8.118941, 8.124121,
	8.129283, 8.134426, 8.139551, 8.144658, 8.149747, 8.154818, 8.159871, 8.164907, 8.169925, 8.174926,
	8.179909, 8.184875, 8.189825, 8.194757, 8.199672, 8.204571, 8.209453, 8.214319, 8.219169, 8.224002,
	8.228819, 8.23362, 8.238405, 8.243174, 8.247928, 8.252665, 8.257388, 8.262095, 8.266787, 8.271463,
	8.276124, 8.280771, 8.285402, 8.290019, 8.294621, 8.299208, 8.303781, 8.308339, 8.312883, 8.317413,
	8.321928, 8.326429, 8.330917, 8.33539, 8.33985, 8.344296, 8.348728, 8.353147, 8.357552, 8.361944,
	8.366322, 8.370687, 8.375039, 8.379378, 8.383704, 8.388017, 8.392317, 8.396605, 8.400879, 8.405141,
	8.409391, 8.413628, 8.417853, 8.422065, 8.426265, 8.430453, 8.434628, 8.438792, 8.442943, 8.447083,
	8.451211, 8.455327, 8.459432, 8.463524, 8.467606, 8.471675, 8.475733, 8.47978, 8.483816, 8.48784,
	8.491853, 8.495855, 8.499846, 8.503826, 8.507795, 8.511753, 8.5157, 8.519636, 8.523562, 8.527477,
	8.531381, 8.535275, 8.539159, 8.543032, 8.546894, 8.550747, 8.554589, 8.558421, 8.562242, 8.566054,
	8.569856, 8.573647, 8.577429, 8.581201, 8.584963, 8.588715, 8.592457, 8.59619, 8.599913, 8.603626,
	8.60733, 8.611025, 8.61471, 8.618386, 8.622052, 8.625709, 8.629357, 8.632995, 8.636625, 8.640245,
	8.643856, 8.647458, 8.651052, 8.654636, 8.658211, 8.661778, 8.665336, 8.668885, 8.672425, 8.675957,
	8.67948, 8.682995, 8.686501, 8.689998, 8.693487, 8.696968, 8.70044, 8.703904, 8.707359, 8.710806,
	8.714246, 8.717676, 8.721099, 8.724514, 8.72792, 8.731319, 8.73471, 8.738092, 8.741467, 8.744834,
	8.748193, 8.751544, 8.754888, 8.758223, 8.761551, 8.764872, 8.768184, 8.771489, 8.774787, 8.778077,
	8.78136, 8.784635, 8.787903, 8.791163, 8.794416, 8.797662, 8.8009, 8.804131, 8.807355, 8.810572,
	8.813781, 8.816984, 8.820179, 8.823367, 8.826548, 8.829723, 8.83289, 8.83605, 8.839204, 8.84235,
	8.84549, 8.848623, 8.851749, 8.854868, 8.857981, 8.861087, 8.864186, 8.867279, 8.870365, 8.873444,
	8.876517, 8.879583, 8.882643, 8.885696, 8.888743, 8.891784, 8.894818, 8.897845, 8.900867, 8.903882,
	8.906891, 8.909893, 8.912889, 8.915879, 8.918863, 8.921841, 8.924813, 8.927778, 8.930737, 8.933691,
	8.936638, 8.939579, 8.942515, 8.945444, 8.948367, 8.951285, 8.954196, 8.957102, 8.960002, 8.962896,
	8.965784, 8.968667, 8.971544, 8.974415, 8.97728, 8.98014, 8.982994, 8.985842, 8.988685, 8.991522,
	8.994353, 8.997179, 9, 9.002815, 9.005625, 9.008429, 9.011227, 9.01402, 9.016808, 9.019591,
	9.022368,
]

# END generated log2
