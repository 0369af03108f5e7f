// Package suggest finds the "did you mean" for a mistyped name: a sink option, a config
// key, a resource type.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for Closest(s, candidates), or "".
func DidYouMean(s string, candidates []string) string {
	if best := Closest(s, candidates); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Closest returns the candidate closest to s: one equal to s but for case, '-' and '_',
// else the nearest within an edit distance of 2 (and less than s is long); "" if none is.
func Closest(s string, candidates []string) string {
	const maxDistance = 2
	folded := fold(s)
	for _, c := range candidates {
		if fold(c) == folded {
			return c
		}
	}
	best, bestDistance := "", maxDistance+1
	for _, c := range candidates {
		if d := distance(s, c, maxDistance); d < bestDistance && d < len(s) {
			best, bestDistance = c, d
		}
	}
	return best
}

// fold lower-cases s and drops '-' and '_', so that on-full, on_full and onFull match.
func fold(s string) string {
	if len(s) > 64 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// distance is the Levenshtein distance between a and b in bytes, or limit+1 if it is
// more than limit.
func distance(a, b string, limit int) int {
	if len(a)-len(b) > limit || len(b)-len(a) > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	if d := prev[len(b)]; d <= limit {
		return d
	}
	return limit + 1
}
