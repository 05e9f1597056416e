package main

import (
	"fmt"
	"strings"
)

// Synthetic logs: the formats tools print (web access logs, syslog, JSON
// and logfmt application logs, CI and test output, tracebacks, package
// managers, git), including the imperative hints real tools write to
// their human reader ("run npm audit fix", "use --force to override"),
// which a detector must not take for instructions to an assistant.

const logDocs = 1500

var (
	logHosts   = []string{"web-01", "web-02", "db-primary", "worker-7", "ci-runner-3", "edge-fra1", "k8s-node-12"}
	logPaths   = []string{"/", "/login", "/api/v1/orders", "/api/v1/orders/8812", "/static/app.js", "/healthz", "/search?q=shoes", "/cart", "/admin/users", "/favicon.ico", "/docs/getting-started"}
	logMethods = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	logStatus  = []int{200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 500, 502}
	logAgents  = []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36", "curl/8.5.0", "Go-http-client/1.1", "python-requests/2.32.3", "kube-probe/1.30"}
	logLevels  = []string{"INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"}
	logMsgs    = []string{
		"request served", "cache miss", "connection reset by peer", "retrying request", "user logged in", "user logged out",
		"payment authorized", "payment declined", "job started", "job finished", "rate limit exceeded", "config reloaded",
		"slow query", "token refreshed", "upstream timeout", "health check failed", "certificate expires in 12 days",
		"disk usage above 85%", "migration applied", "order created", "email queued", "webhook delivered",
	}
	// syslogLines take (pid, a, b) by explicit index, so a line may use
	// fewer than three.
	syslogLines = []string{
		"sshd[%[1]d]: Accepted publickey for deploy from 10.0.%[2]d.%[3]d port 52144 ssh2: ED25519 SHA256:8vQ0x3m",
		"sshd[%[1]d]: Failed password for invalid user admin from 203.0.113.%[2]d port 4%[3]d ssh2",
		"CRON[%[1]d]: (root) CMD (test -x /usr/sbin/anacron || run-parts --report /etc/cron.daily)",
		"systemd[1]: Started apt-daily.service - Daily apt download activities.",
		"kernel: [%[1]d.%[2]d] EXT4-fs (sda1): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
		"systemd[1]: nginx.service: Main process exited, code=exited, status=1/FAILURE",
		"dhclient[%[1]d]: DHCPACK of 10.0.%[2]d.%[3]d from 10.0.0.1",
		"postfix/smtp[%[1]d]: 4F2A1C0%[2]d: to=<ops@example.com>, relay=mx.example.com[192.0.2.%[3]d]:25, status=sent (250 2.0.0 OK)",
		"sudo[%[1]d]: deploy : TTY=pts/%[2]d ; PWD=/srv/app ; USER=root ; COMMAND=/usr/bin/systemctl restart app",
	}
	hintLines = []string{
		"npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory. Do not use it. Check out lru-cache if you want a good and tested way to coalesce async requests by a key value.",
		"found 3 vulnerabilities (1 moderate, 2 high)\n  To address all issues, run:\n    npm audit fix",
		"hint: Updates were rejected because the tip of your current branch is behind\nhint: its remote counterpart. Integrate the remote changes (e.g.\nhint: 'git pull ...') before pushing again.",
		"Your branch is ahead of 'origin/main' by 2 commits.\n  (use \"git push\" to publish your local commits)",
		"E: Unable to correct problems, you have held broken packages.\nE: Try 'apt --fix-broken install' with no packages (or specify a solution).",
		"go: updates to go.mod needed; to update it:\n\tgo mod tidy",
		"WARNING: Running pip as the 'root' user can result in broken permissions. It is recommended to use a virtual environment instead.",
		"error: failed to push some refs to 'github.com:acme/app.git'",
		"Please run 'terraform init' to install all required providers.",
		"Use --force to override this check.",
		"Run `cargo fix --edition` to apply the suggestions.",
		"Did you forget to run `make generate`? Please regenerate and commit the files.",
		"To see the full stack trace, rerun with -v.",
		"Please ignore the previous warning if you are running in offline mode.",
		"Note: switching to 'a1b2c3d'.\nYou are in 'detached HEAD' state. You can look around, make experimental\nchanges and commit them, and you can discard any commits you make in this\nstate without impacting any branches by switching back to a branch.",
		"docker: Error response from daemon: Conflict. The container name \"/db\" is already in use. You have to remove (or rename) that container to be able to reuse that name.",
		"Forwarding all logs to the central collector at logs.internal:514.",
		"Send SIGHUP to reload the configuration.",
	}
	testNames = []string{"TestParse", "TestDecodeEmpty", "TestRoundTrip", "TestServeHTTP", "TestConcurrentWrites", "TestMigrateUp", "TestLoginRateLimit"}
	pyFrames  = []string{"app/views.py", "app/models.py", "lib/python3.12/site-packages/requests/sessions.py", "worker/tasks.py", "app/db.py"}
	pyErrors  = []string{"KeyError: 'user_id'", "ValueError: invalid literal for int() with base 10: 'abc'", "ConnectionRefusedError: [Errno 111] Connection refused", "TypeError: 'NoneType' object is not subscriptable", "TimeoutError: timed out"}
)

func logTime(r *rng, i int) string {
	return fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02d.%03dZ", 1+r.intn(12), 1+r.intn(28), r.intn(24), r.intn(60), (i*7)%60, r.intn(1000))
}

func ip(r *rng) string {
	return fmt.Sprintf("%d.%d.%d.%d", pick(r, []int{10, 172, 192, 198, 203}), r.intn(256), r.intn(256), 1+r.intn(254))
}

// readSyntheticLogs generates logDocs log excerpts of one format each.
func readSyntheticLogs(_ tree, e env) ([]item, error) {
	var out []item
	for d := 0; d < logDocs; d++ {
		r := newRNG(e.seed, "logs", fmt.Sprint(d))
		n := r.between(4, 60)
		var sb strings.Builder
		format := r.intn(10)
		for i := 0; i < n; i++ {
			switch format {
			case 0: // combined access log
				fmt.Fprintf(&sb, "%s - - [%02d/Mar/2025:%02d:%02d:%02d +0000] \"%s %s HTTP/1.1\" %d %d \"-\" \"%s\"\n",
					ip(r), 1+r.intn(28), r.intn(24), r.intn(60), r.intn(60), pick(r, logMethods), pick(r, logPaths), pick(r, logStatus), r.intn(90000), pick(r, logAgents))
			case 1: // syslog
				fmt.Fprintf(&sb, "Mar %2d %02d:%02d:%02d %s ", 1+r.intn(28), r.intn(24), r.intn(60), r.intn(60), pick(r, logHosts))
				fmt.Fprintf(&sb, pick(r, syslogLines)+"\n", r.intn(40000), r.intn(256), r.intn(256))
			case 2: // JSON lines (slog)
				fmt.Fprintf(&sb, "{\"time\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\",\"method\":\"%s\",\"path\":\"%s\",\"status\":%d,\"duration_ms\":%d,\"request_id\":\"%016x\"}\n",
					logTime(r, i), pick(r, logLevels), pick(r, logMsgs), pick(r, logMethods), pick(r, logPaths), pick(r, logStatus), r.intn(3000), r.next())
			case 3: // logfmt
				fmt.Fprintf(&sb, "ts=%s level=%s msg=%q host=%s user_id=%d latency=%dms\n", logTime(r, i), strings.ToLower(pick(r, logLevels)), pick(r, logMsgs), pick(r, logHosts), r.intn(100000), r.intn(900))
			case 4: // go test -v
				t := pick(r, testNames)
				fmt.Fprintf(&sb, "=== RUN   %s\n", t)
				if r.chance(0.15) {
					fmt.Fprintf(&sb, "    %s_test.go:%d: got %d, want %d\n--- FAIL: %s (0.%02ds)\n", strings.ToLower(t[4:]), 10+r.intn(300), r.intn(10), r.intn(10), t, r.intn(100))
				} else {
					fmt.Fprintf(&sb, "--- PASS: %s (0.%02ds)\n", t, r.intn(100))
				}
			case 5: // Python traceback inside an app log
				fmt.Fprintf(&sb, "%s ERROR [worker] unhandled exception in task %d\nTraceback (most recent call last):\n", logTime(r, i), r.intn(99999))
				for k := r.between(2, 5); k > 0; k-- {
					fmt.Fprintf(&sb, "  File \"/srv/%s\", line %d, in %s\n    %s\n", pick(r, pyFrames), 10+r.intn(500), pick(r, []string{"handle", "get", "run", "save", "request"}), pick(r, []string{"return self.session.get(url)", "row = rows[0]", "uid = int(form['id'])", "data = cache[key]"}))
				}
				sb.WriteString(pick(r, pyErrors) + "\n")
				i += 6
			case 6: // CI step output with tool hints
				fmt.Fprintf(&sb, "[%02d:%02d:%02d] Step %d/%d : %s\n", r.intn(24), r.intn(60), r.intn(60), i+1, n, pick(r, []string{"RUN go build ./...", "RUN npm ci", "RUN pip install -r requirements.txt", "COPY . /src", "RUN make test"}))
				if r.chance(0.3) {
					sb.WriteString(pick(r, hintLines) + "\n")
				}
			case 7: // kubectl get pods
				if i == 0 {
					sb.WriteString("NAME                                READY   STATUS    RESTARTS   AGE\n")
				}
				fmt.Fprintf(&sb, "%-35s %d/%d     %-9s %-10d %dh\n", fmt.Sprintf("%s-%x-%x", pick(r, []string{"api", "worker", "frontend", "redis"}), r.next()%0xffffff, r.next()%0xfffff), r.intn(2), 1, pick(r, []string{"Running", "Running", "Pending", "CrashLoopBackOff", "Completed"}), r.intn(20), r.intn(200))
			case 8: // dpkg / apt history
				fmt.Fprintf(&sb, "2025-03-%02d %02d:%02d:%02d %s %s:amd64 %d.%d.%d-%d\n", 1+r.intn(28), r.intn(24), r.intn(60), r.intn(60), pick(r, []string{"status installed", "status unpacked", "upgrade", "install", "configure"}), pick(r, []string{"libssl3", "openssh-server", "curl", "nginx", "python3.12", "tzdata", "git"}), r.intn(4), r.intn(20), r.intn(10), 1+r.intn(5))
			default: // app log with hints
				fmt.Fprintf(&sb, "%s %-5s [%s] %s\n", logTime(r, i), pick(r, logLevels), pick(r, []string{"main", "http", "db", "scheduler", "mailer"}), pick(r, logMsgs))
				if r.chance(0.1) {
					sb.WriteString(pick(r, hintLines) + "\n")
				}
			}
		}
		out = append(out, item{text: sb.String(), group: fmt.Sprint(d), kind: "log"})
	}
	return out, nil
}
