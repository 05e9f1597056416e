package policy

import (
	"path"
	"regexp"
	"strings"
)

// destructive_command(x) is the flow function of the built-in pack's
// ask-destructive-commands policy (pack/60-destructive-commands.yaml): what
// a shell command would destroy beyond repair, described in a few words,
// or "" when it is nothing of the kind. x is a command string, an argv list
// (Codex's ["bash", "-lc", "…"]) or a tool's arguments: their command or
// cmd member (a string or an argv list), followed by an args list when
// there is one.
//
// It finds:
//   - rm (and rmdir /s, rd /s, del /s, Remove-Item -Recurse) recursive on
//     /, a top-level system directory, a home directory (~, ~user, $HOME,
//     ${HOME}, /home/x, /Users/x, /root) or a whole volume (/Volumes/x,
//     /mnt/x, /media/x, /media/user/x, /run/media/user/x, a drive root), a
//     glob of one (/*, ~/*) included; any rm --no-preserve-root; find
//     deleting from one of them with no name test;
//   - chmod, chown and chgrp recursive on one of them;
//   - mkfs*, mke2fs, mkntfs, mkdosfs, mkswap, wipefs and newfs* of a /dev
//     device, diskutil eraseDisk (eraseVolume, reformat, zeroDisk,
//     randomDisk, secureErase, partitionDisk), format of a drive;
//   - dd of=, shred, tee or an output redirection to a disk device
//     (/dev/sd*, hd*, vd*, xvd*, nvme*, disk*, rdisk*, mmcblk*, md*, dm-*,
//     mapper/*, disk/by-*, \\.\PhysicalDrive*);
//   - fork bombs (`:(){ :|:& };:`, `f(){ f|f& }; f`, perl's fork while fork);
//   - a download piped into a shell (curl|wget … | sh, bash, zsh, …,
//     also through sudo or env; sh <(curl …), bash -c "$(curl …)", source
//     <(curl …); iwr|irm … | iex).
//
// The command is split into simple commands the way a POSIX shell reads
// it (quotes, backslashes, comments; ; & | ( ) ` $( and newlines end a
// command); each word that holds a command of its own — a quoted script
// of sh -c, ssh, eval or su -c, a $( ) inside double quotes — is read
// again, a few levels deep. A command name counts wherever it stands in
// its simple command (sudo rm, xargs rm, kubectl exec pod -- rm), with
// its path and case ignored. A command longer than maxFlowBytes is not
// read: it is reported as too long to check, so padding cannot hide one.
func destructiveCommand(v any, b *budget) string {
	d := destructive(v, b)
	if len(d) > maxDestructiveDesc { // an operand can be long; the reason stays short
		d = strings.ToValidUTF8(d[:maxDestructiveDesc-3], "") + "..."
	}
	return d
}

// maxDestructiveDesc bounds the description destructive_command returns.
const maxDestructiveDesc = 256

func destructive(v any, b *budget) string {
	var argv []string
	switch t := v.(type) {
	case string:
		return destructiveScript(t, b)
	case []any:
		argv = stringsOf(t)
	case map[string]any:
		for _, k := range [...]string{"command", "cmd"} {
			switch c := t[k].(type) {
			case string:
				if rest, ok := t["args"].([]any); ok && len(rest) > 0 {
					argv = append([]string{c}, stringsOf(rest)...)
				} else {
					return destructiveScript(c, b)
				}
			case []any:
				argv = stringsOf(c)
			}
			if argv != nil {
				break
			}
		}
	}
	if len(argv) == 0 {
		return ""
	}
	n := 0
	for _, w := range argv {
		n += len(w) + 1
	}
	if n > b.left {
		b.left = 0
		return tooLongToCheck
	}
	b.left -= n
	// An argv is one simple command whose words are already split; its
	// text, joined, is what the whole-text checks read.
	if d := textChecks(strings.Join(argv, " ")); d != "" {
		return d
	}
	return checkWords(argv, nil, 0)
}

const tooLongToCheck = "a shell command too long to check (over 64 KiB)"

func stringsOf(list []any) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// destructiveScript checks one command string within the budget.
func destructiveScript(s string, b *budget) string {
	if s == "" {
		return ""
	}
	if !b.take(s) {
		return tooLongToCheck
	}
	if !strings.ContainsAny(s, "'\"\\") && !suspect(strings.ToLower(s)) {
		return "" // nothing to look at closely (quotes could hide a name: r''m)
	}
	return checkScript(s, 0)
}

// maxScriptDepth bounds how deep words holding scripts are read again.
const maxScriptDepth = 4

func checkScript(s string, depth int) string {
	if depth == 0 {
		if d := textChecks(s); d != "" {
			return d
		}
	}
	for _, c := range splitCommands(s) {
		if d := checkWords(c.words, c.redirs, depth); d != "" {
			return d
		}
	}
	return ""
}

var (
	// forkDefRE finds shell function definitions (name() {); forkBody
	// checks the body for the name piped into itself in the background.
	forkDefRE  = regexp.MustCompile(`([A-Za-z_:.][A-Za-z0-9_:.-]*)\s*\(\s*\)\s*\{`)
	perlForkRE = regexp.MustCompile(`\bfork\s+while\s+fork\b`)
	// forkSpacedRE: "( )", which the literal "()" prefilter misses.
	forkSpacedRE = regexp.MustCompile(`\(\s+\)`)
	// pipeShellRE: a download piped into a shell, maybe through sudo
	// (with options) or env (with assignments), by name or path.
	pipeShellRE = regexp.MustCompile(`\b(?:curl|wget|fetch|aria2c|xh)\b[^|;\n]*\|\s*` +
		`(?:sudo(?:\s+-\S+)*\s+)?(?:env(?:\s+\S+=\S*)*\s+)?(?:\S*/)?(?:ba|da|z|k|mk|c|tc|fi)?sh(?:\s|$|[;&|)])`)
	// substShellRE: a shell or source running what a download prints,
	// through process or command substitution.
	substShellRE = regexp.MustCompile(`(?:^|[\s;&|(])(?:(?:ba|da|z|k)?sh|source|eval|\.)\s+(?:-\S+\s+)*["']?[<$]\(\s*(?:curl|wget)\b`)
	psPipeRE     = regexp.MustCompile(`\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|;\n]*\|\s*(?:iex|invoke-expression)\b`)
	// diskDeviceRE: a whole disk or partition device.
	diskDeviceRE = regexp.MustCompile(`^/dev/(?:(?:sd|hd|vd|xvd)[a-z]+[0-9]*|nvme[0-9]+(?:n[0-9]+(?:p[0-9]+)?)?|r?disk[0-9]+(?:s[0-9]+)*` +
		`|mmcblk[0-9]+(?:p[0-9]+)?|md[0-9]+|dm-[0-9]+|mapper/.+|disk/by-.+|root)$|(?i:physicaldrive[0-9])`)
	driveRootRE = regexp.MustCompile(`(?i)^[a-z]:[\\/]*(?:\*(?:\.\*)?)?$|^[a-z]:[\\/]+(?:windows|users|program files(?: \(x86\))?)[\\/]*$`)
)

// textChecks are the checks that read the command's whole text: fork
// bombs and downloads piped into a shell. The regular expressions run
// only on a text holding the literals they need.
func textChecks(s string) string {
	if isForkBomb(s) {
		return "a fork bomb"
	}
	l := strings.ToLower(s) // s itself when it has no upper case
	fetches := strings.Contains(l, "curl") || strings.Contains(l, "wget")
	if (strings.Contains(l, "|") && (fetches || strings.Contains(l, "fetch") || strings.Contains(l, "aria2c") || strings.Contains(l, "xh")) && pipeShellRE.MatchString(l)) ||
		(fetches && strings.Contains(l, "(") && substShellRE.MatchString(l)) ||
		(strings.Contains(l, "|") && (strings.Contains(l, "iex") || strings.Contains(l, "invoke-expression")) && psPipeRE.MatchString(l)) {
		return "a download piped into a shell"
	}
	return ""
}

func isForkBomb(s string) bool {
	if strings.Contains(s, "fork") && perlForkRE.MatchString(s) {
		return true
	}
	if !strings.Contains(s, "()") && !forkSpacedRE.MatchString(s) {
		return false
	}
	for _, m := range forkDefRE.FindAllStringSubmatchIndex(s, 64) {
		name := s[m[2]:m[3]]
		body := s[m[1]:]
		if end := strings.IndexByte(body, '}'); end >= 0 {
			body = body[:end]
		}
		body = strings.Join(strings.Fields(body), "")
		if strings.Contains(body, name+"|"+name) && strings.Contains(body, "&") {
			return true
		}
	}
	return false
}

// simpleCommand is one simple command: its words (quotes removed) and the
// targets of its output redirections.
type simpleCommand struct {
	words  []string
	redirs []string
}

// splitCommands splits s into simple commands as a POSIX shell reads it,
// leniently: an unterminated quote runs to the end, and a word holding a
// command substitution inside double quotes is kept whole (checkWords
// reads it again).
func splitCommands(s string) []simpleCommand {
	var (
		out      []simpleCommand
		cur      simpleCommand
		word     strings.Builder
		inWord   bool
		redirect bool // the next word is an output redirection's target
	)
	endWord := func() {
		if !inWord {
			return
		}
		if redirect {
			cur.redirs = append(cur.redirs, word.String())
			redirect = false
		} else {
			cur.words = append(cur.words, word.String())
		}
		word.Reset()
		inWord = false
	}
	endCommand := func() {
		endWord()
		redirect = false
		if len(cur.words) > 0 || len(cur.redirs) > 0 {
			out = append(out, cur)
		}
		cur = simpleCommand{}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' { // a line continuation joins lines
					word.WriteByte(s[i])
					inWord = true
				}
			} else {
				word.WriteByte(c)
				inWord = true
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				word.WriteByte(s[i])
			}
			inWord = true
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
			} else {
				i += j - 1
			}
		case c == '>': // >, >>, >|, >&: the next word is where output goes
			endWord()
			for i+1 < len(s) && strings.IndexByte(">|&", s[i+1]) >= 0 {
				i++
			}
			redirect = true
		case c == '<':
			endWord()
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '`':
			endCommand()
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			endCommand()
			i++
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCommand()
	return out
}

// checkWords checks one simple command: each known command name in it
// with the words after it, its redirections, and the words that hold
// scripts of their own.
func checkWords(words, redirs []string, depth int) string {
	for _, r := range redirs {
		if diskDeviceRE.MatchString(r) {
			return "a write to the disk device " + r
		}
	}
	// A name's first occurrence sees every word a later one would: each
	// is checked once, so the work stays linear in the words.
	var seen map[string]bool
	for i, w := range words {
		name := strings.ToLower(path.Base(strings.ReplaceAll(w, `\`, "/")))
		if !isCommandName(name) || seen[name] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[name] = true
		if d := checkCommand(name, words[i+1:]); d != "" {
			return d
		}
	}
	if depth >= maxScriptDepth {
		return ""
	}
	evaled := false
	for i, w := range words {
		// A word with a command inside: a quoted script (sh -c '…', ssh
		// host '…', eval "…") or a substitution kept in double quotes.
		if strings.ContainsAny(w, " \t\n;|&") || strings.Contains(w, "$(") || strings.Contains(w, "`") {
			sub := w
			if j := strings.Index(w, "$("); j >= 0 {
				sub = w[j+2:]
			} else if j := strings.IndexByte(w, '`'); j >= 0 {
				sub = w[j+1:]
			}
			if d := checkScript(sub, depth+1); d != "" {
				return d
			}
		}
		if !evaled && strings.ToLower(path.Base(w)) == "eval" && i+1 < len(words) {
			evaled = true // once: its words hold any later eval
			if d := checkScript(strings.Join(words[i+1:], " "), depth+1); d != "" {
				return d
			}
		}
	}
	return ""
}

// suspect reports whether l, a command in lower case without quotes or
// backslashes, holds what every finding needs: a command name checkCommand
// knows, a downloader, "fork", a parenthesis or /dev/
// Most commands are let through without being split.
func suspect(l string) bool {
	if strings.Contains(l, "/dev/") || strings.Contains(l, "physicaldrive") || strings.Contains(l, "(") {
		return true
	}
	start := -1
	for i := 0; i <= len(l); i++ {
		if i < len(l) {
			c := l[i]
			if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
				if start < 0 {
					start = i
				}
				continue
			}
		}
		if start >= 0 {
			if w := l[start:i]; isCommandName(w) || suspectWords[w] {
				return true
			}
			start = -1
		}
	}
	return false
}

var suspectWords = map[string]bool{
	"fork": true, "curl": true, "wget": true, "fetch": true, "aria2c": true, "xh": true, "iwr": true, "irm": true,
	"invoke-webrequest": true, "invoke-restmethod": true,
}

// commandNames are the names checkCommand knows (and mkfs*, newfs*).
var commandNames = map[string]bool{
	"rm": true, "remove-item": true, "ri": true, "rmdir": true, "rd": true, "del": true, "erase": true, "find": true,
	"chmod": true, "chown": true, "chgrp": true, "mke2fs": true, "mkntfs": true, "mkdosfs": true, "mkswap": true,
	"wipefs": true, "diskutil": true, "format": true, "dd": true, "shred": true, "tee": true,
}

func isCommandName(name string) bool {
	return commandNames[name] || strings.HasPrefix(name, "mkfs") || strings.HasPrefix(name, "newfs")
}

// checkCommand checks the command name with the words after it.
func checkCommand(name string, args []string) string {
	switch {
	case name == "rm" || name == "remove-item" || name == "ri":
		return checkRemove(name, args, false)
	case name == "rmdir" || name == "rd" || name == "del" || name == "erase":
		return checkRemove(name, args, true)
	case name == "find":
		return checkFind(args)
	case name == "chmod" || name == "chown" || name == "chgrp":
		if recursive(args, "R") {
			if t := dangerousOperand(args); t != "" {
				return "a recursive " + name + " of " + t
			}
		}
	case strings.HasPrefix(name, "mkfs") || strings.HasPrefix(name, "newfs") ||
		name == "mke2fs" || name == "mkntfs" || name == "mkdosfs" || name == "mkswap" || name == "wipefs":
		for _, a := range args {
			if strings.HasPrefix(a, "/dev/") {
				return "formatting the device " + a + " (" + name + ")"
			}
		}
	case name == "diskutil":
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			switch strings.ToLower(a) { // the verb: the first operand
			case "erasedisk", "erasevolume", "reformat", "zerodisk", "randomdisk", "secureerase", "partitiondisk":
				return "erasing a disk (diskutil " + a + ")"
			}
			return ""
		}
	case name == "format":
		for _, a := range args {
			if len(a) == 2 && a[1] == ':' {
				return "formatting the drive " + a
			}
		}
	case name == "dd":
		for _, a := range args {
			if dev, ok := strings.CutPrefix(a, "of="); ok && diskDeviceRE.MatchString(dev) {
				return "a raw write to the disk device " + dev + " (dd)"
			}
		}
	case name == "shred" || name == "tee":
		for _, a := range args {
			if diskDeviceRE.MatchString(a) {
				return "a write to the disk device " + a + " (" + name + ")"
			}
		}
	}
	return ""
}

// checkRemove: a recursive delete of a dangerous target, or any rm
// --no-preserve-root. windows: rd, rmdir, del, erase, recursive with /s.
func checkRemove(name string, args []string, windows bool) string {
	rec := false
	if windows {
		for _, a := range args {
			if strings.EqualFold(a, "/s") {
				rec = true
			}
		}
		if name == "rmdir" && recursive(args, "") { // rmdir is not recursive on POSIX
			rec = true
		}
	} else {
		rec = recursive(args, "rR")
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--no-preserve-root" {
			return "a delete with rm --no-preserve-root"
		}
	}
	if !rec {
		return ""
	}
	if t := dangerousOperand(args); t != "" {
		return "a recursive delete of " + t
	}
	return ""
}

// recursive reports whether args hold a recursive option: --recursive, a
// cluster of short options one of which is in letters (-rf, -Rfv), or
// PowerShell's -Recurse (or a prefix of it, -r, -rec).
func recursive(args []string, letters string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		l := strings.ToLower(a)
		switch {
		case l == "--recursive":
			return true
		case len(l) >= 3 && strings.HasPrefix("-recurse", l):
			return true
		case letters != "" && len(a) >= 2 && a[0] == '-' && a[1] != '-' && shortCluster(a[1:]) && strings.ContainsAny(a[1:], letters):
			return true
		}
	}
	return false
}

// shortCluster: only option letters (rm -rf, chown -Rh).
func shortCluster(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return len(s) <= 8
}

// dangerousOperand returns the first operand (not an option) that names a
// dangerous target, as written; "" when none does.
func dangerousOperand(args []string) string {
	opts := true
	for _, a := range args {
		if opts && a == "--" {
			opts = false
			continue
		}
		if opts && len(a) > 1 && a[0] == '-' {
			continue
		}
		if dangerousTarget(a) {
			return a
		}
	}
	return ""
}

// topLevel are the directories directly under / whose recursive delete
// (or chmod, chown) ruins the system or its data.
var topLevel = map[string]bool{
	"bin": true, "boot": true, "dev": true, "etc": true, "home": true, "lib": true, "lib32": true, "lib64": true,
	"libx32": true, "media": true, "mnt": true, "opt": true, "proc": true, "root": true, "run": true, "sbin": true,
	"srv": true, "sys": true, "usr": true, "var": true, "applications": true, "library": true, "system": true,
	"users": true, "volumes": true, "private": true, "cores": true,
}

// homeVars are the spellings of the home directory a shell expands.
var homeVars = [...]string{"${HOME}", "$HOME", "$env:HOME", "$env:USERPROFILE", "%USERPROFILE%", "${env:USERPROFILE}"}

// dangerousTarget reports whether t, an operand as the shell passes it
// (quotes removed, variables and globs not expanded), is /, a top-level
// directory, a home directory or a whole volume, or a glob of everything
// in one.
func dangerousTarget(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" {
		return false
	}
	if driveRootRE.MatchString(t) {
		return true
	}
	for _, h := range homeVars {
		if len(t) >= len(h) && strings.EqualFold(t[:len(h)], h) {
			t = "~" + t[len(h):]
			break
		}
	}
	if strings.HasPrefix(t, "~") {
		user, rest, _ := strings.Cut(t[1:], "/")
		if user == "" {
			user = "~"
		}
		t = "/home/" + user + "/" + rest
	}
	if !strings.HasPrefix(t, "/") {
		return false
	}
	t = path.Clean(t)
	for t != "/" && strings.Trim(path.Base(t), "*.?{},") == "" { // /*, ~/.*, /{*,.*}
		t = path.Dir(t)
	}
	if t == "/" {
		return true
	}
	parts := strings.Split(t[1:], "/")
	top := strings.ToLower(parts[0])
	switch len(parts) {
	case 1:
		return topLevel[top]
	case 2: // a home, a volume
		return top == "home" || top == "users" || top == "volumes" || top == "mnt" || top == "media"
	case 3: // a volume under a user's media directory
		return top == "media" || top == "run" && strings.EqualFold(parts[1], "media")
	case 4:
		return top == "run" && strings.EqualFold(parts[1], "media")
	}
	return false
}

// checkFind: find deleting (-delete, -exec rm) under a dangerous path
// with no test on names, which would delete everything there.
func checkFind(args []string) string {
	var root string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		if root == "" && dangerousTarget(a) {
			root = a
		}
	}
	if root == "" {
		return ""
	}
	deletes := false
	for j, a := range args[i:] {
		switch a {
		case "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename", "-iwholename", "-newer", "-mtime", "-mmin", "-user":
			return ""
		case "-delete":
			deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if k := i + j + 1; k < len(args) && path.Base(args[k]) == "rm" {
				deletes = true
			}
		}
	}
	if deletes {
		return "a recursive delete of " + root + " (find)"
	}
	return ""
}
