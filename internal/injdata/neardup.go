package main

import (
	"hash/fnv"
	"slices"
	"strings"
)

// nearDupJaccard is the similarity (Jaccard over word 5-gram shingles)
// from which two texts count as variants of one another: a jailbreak
// template with a different payload, one attack template over many
// goals. Variants share a split group, so no variant of an evaluation
// text is trained on.
const nearDupJaccard = 0.5

// shingles returns the sorted, distinct hashes of the word 5-grams of s
// (the whole text when it has fewer than five words).
func shingles(s string) []uint64 {
	w := strings.Fields(strings.ToLower(s))
	n := 5
	if len(w) < n {
		n = len(w)
	}
	var out []uint64
	for i := 0; i+n <= len(w); i++ {
		h := fnv.New64a()
		for _, x := range w[i : i+n] {
			h.Write([]byte(x))
			h.Write([]byte{0})
		}
		out = append(out, h.Sum64())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func jaccard(a, b []uint64) float64 {
	i, j, both := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			both++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - both
	if union == 0 {
		return 1
	}
	return float64(both) / float64(union)
}

// clusterNearDups gives items that share a group, or whose texts are
// near-duplicates, one group: the smallest of their groups. It is
// quadratic, for sources of a few thousand items.
func clusterNearDups(items []item) {
	parent := make([]int, len(items))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	first := map[string]int{}
	sh := make([][]uint64, len(items))
	for i, it := range items {
		if j, ok := first[it.group]; ok {
			union(i, j)
		} else {
			first[it.group] = i
		}
		sh[i] = shingles(it.text)
	}
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			a, b := len(sh[i]), len(sh[j])
			if min(a, b)*2 < max(a, b) {
				continue // Jaccard ≤ min/max < 0.5
			}
			if find(i) != find(j) && jaccard(sh[i], sh[j]) > nearDupJaccard {
				union(i, j)
			}
		}
	}
	name := map[int]string{}
	for i, it := range items {
		r := find(i)
		if g, ok := name[r]; !ok || it.group < g {
			name[r] = it.group
		}
	}
	for i := range items {
		items[i].group = name[find(i)]
	}
}
