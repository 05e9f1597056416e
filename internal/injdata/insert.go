package main

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// window returns a slice of doc of about n bytes that starts and ends at
// line boundaries where it can (else at a space, else at a rune
// boundary). A doc of at most n bytes is returned whole.
func window(r *rng, doc string, n int) string {
	if len(doc) <= n {
		return doc
	}
	start := r.intn(len(doc) - n + 1)
	if i := strings.IndexByte(doc[start:], '\n'); start > 0 && i >= 0 && i < n/2 {
		start += i + 1
	}
	for start < len(doc) && !utf8.RuneStart(doc[start]) {
		start++
	}
	end := start + n
	if end >= len(doc) {
		return doc[start:]
	}
	if i := strings.LastIndexByte(doc[start:end], '\n'); i > n/2 {
		end = start + i
	} else if i := strings.LastIndexByte(doc[start:end], ' '); i > n/2 {
		end = start + i
	}
	for end > start && !utf8.RuneStart(doc[end]) {
		end--
	}
	return doc[start:end]
}

// windowSize draws a document length: mostly short tool results, some
// pages, a few long ones.
func windowSize(r *rng) int {
	switch x := r.intn(100); {
	case x < 50:
		return r.between(200, 1200)
	case x < 85:
		return r.between(1200, 4000)
	default:
		return r.between(4000, 12000)
	}
}

// commentPrefix guesses a line-comment marker for a code document.
func commentPrefix(doc string) string {
	switch {
	case strings.Contains(doc, "\nfunc ") || strings.Contains(doc, "package ") || strings.Contains(doc, "//"):
		return "// "
	case strings.Contains(doc, "\ndef ") || strings.Contains(doc, "import ") || strings.Contains(doc, "\nsub ") || strings.Contains(doc, "\n#"):
		return "# "
	case strings.Contains(doc, "/*"):
		return "// "
	}
	return "# "
}

func prefixLines(s, p string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(p+l, " ")
	}
	return strings.Join(lines, "\n")
}

// insertion is how an instruction was placed; the test checks each.
type insertion int

const (
	insLine    insertion = iota // its own line(s) between two lines
	insInline                   // inside a line, after a sentence or a word
	insComment                  // a code comment
	insCell                     // a table row or cell
	insJSON                     // a JSON string member
	insHTML                     // an HTML comment
)

// insert places instr into doc at a position r draws, in a form that
// fits the document kind (a comment in code, a cell in a table, a string
// in JSON, a paragraph or part of a sentence in text). The result is
// doc[:pos] + added + doc[pos:]: the document is intact around the
// insertion.
func insert(r *rng, doc, instr, kind string) (out string, pos int, added string, how insertion) {
	lines := strings.Split(doc, "\n")
	// lineStart[i] is the byte offset of line i; lineStart[len] = len(doc)+1
	lineStart := make([]int, len(lines)+1)
	for i, l := range lines {
		lineStart[i+1] = lineStart[i] + len(l) + 1
	}
	at := r.intn(len(lines) + 1) // before line at; len(lines): at the end
	// BIPIA-style placement at the very start or end, a third of the time
	switch r.intn(6) {
	case 0:
		at = 0
	case 1:
		at = len(lines)
	}
	flat := strings.Join(strings.Fields(instr), " ")
	done := func(p int, a string, h insertion) (string, int, string, insertion) {
		return doc[:p] + a + doc[p:], p, a, h
	}
	var block string
	how = insLine
	switch kind {
	case "code":
		if r.chance(0.6) {
			block, how = prefixLines(instr, commentPrefix(doc)), insComment
		}
	case "table":
		cell := strings.ReplaceAll(flat, "|", "/")
		if strings.Contains(doc, "|") && r.chance(0.7) {
			block, how = "| "+cell+" |", insCell
			if at < len(lines) && strings.Count(lines[at], "|") >= 2 && r.chance(0.5) {
				// append to the last cell of an existing row
				if i := strings.LastIndexByte(strings.TrimRight(lines[at], " "), '|'); i > 0 {
					return done(lineStart[at]+i, " "+cell+" ", insCell)
				}
			}
		} else if strings.Contains(doc, ",") && r.chance(0.5) {
			block, how = "\""+strings.ReplaceAll(flat, "\"", "\"\"")+"\",,", insCell
		}
	case "json":
		if strings.Contains(doc, "\":") && r.chance(0.7) {
			q, _ := json.Marshal(instr)
			key := pick(r, []string{"note", "description", "comment", "message", "summary", "title"})
			block, how = "\""+key+"\": "+string(q)+",", insJSON
		}
	case "web":
		if r.chance(0.15) {
			block, how = "<!-- "+instr+" -->", insHTML
		}
	}
	if block == "" && r.chance(0.4) {
		// inline: after a sentence end, else after a word, inside a line
		var cands []int
		for i, l := range lines {
			if len(l) > 40 {
				cands = append(cands, i)
			}
		}
		if len(cands) > 0 {
			li := pick(r, cands)
			l := lines[li]
			p := -1
			if j := strings.Index(l[len(l)/3:], ". "); j >= 0 {
				p = len(l)/3 + j + 2
			} else if j := strings.IndexByte(l[len(l)/2:], ' '); j >= 0 {
				p = len(l)/2 + j + 1
			}
			if p > 0 {
				return done(lineStart[li]+p, flat+" ", insInline)
			}
		}
	}
	if block == "" {
		block = instr
		if r.chance(0.5) {
			block = "\n" + block + "\n" // a paragraph of its own
		}
	}
	if at == len(lines) {
		return done(len(doc), "\n"+block, how)
	}
	return done(lineStart[at], block+"\n", how)
}
