package console

import (
	"bytes"
	"encoding/json"
	"strings"
)

// diffLine is one line of a diff: Op is ' ' (both), '-' (input only) or
// '+' (output only).
type diffLine struct {
	Op   string
	Text string
}

// Class is the line's CSS class.
func (l diffLine) Class() string {
	switch l.Op {
	case "-":
		return "del"
	case "+":
		return "ins"
	}
	return "same"
}

// jsonDiff compares two JSON documents line by line, both indented with
// sorted keys (so key order is no change), and returns the diff, or a note
// saying why there is none.
func jsonDiff(a, b json.RawMessage) ([]diffLine, string) {
	la, ok1 := canonicalLines(a)
	lb, ok2 := canonicalLines(b)
	if !ok1 || !ok2 {
		return nil, "the input or the output is not JSON"
	}
	if len(la) > maxDiffLines || len(lb) > maxDiffLines {
		return nil, "too large to compare here"
	}
	return diffLines(la, lb), ""
}

func canonicalLines(raw json.RawMessage) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, false
	}
	return strings.Split(string(b), "\n"), true
}

// maxDiffCells bounds the table the alignment of the changed lines takes.
const maxDiffCells = 1 << 20

// diffLines is the longest-common-subsequence diff of a and b, common
// prefix and suffix first (the usual modify changes a few lines).
func diffLines(a, b []string) []diffLine {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]diffLine, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		out = append(out, diffLine{" ", l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		// Too many changed lines to align: all out, then all in.
		for _, l := range ma {
			out = append(out, diffLine{"-", l})
		}
		for _, l := range mb {
			out = append(out, diffLine{"+", l})
		}
		ma, mb = nil, nil
	}
	// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
	lcs := make([][]int32, len(ma)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(mb)+1)
	}
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(ma) || j < len(mb) {
		switch {
		case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
			out = append(out, diffLine{" ", ma[i]})
			i, j = i+1, j+1
		case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, diffLine{"-", ma[i]})
			i++
		default:
			out = append(out, diffLine{"+", mb[j]})
			j++
		}
	}
	for _, l := range a[len(a)-suf:] {
		out = append(out, diffLine{" ", l})
	}
	return out
}
