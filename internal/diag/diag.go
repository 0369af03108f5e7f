// Package diag formats the counts that kubeevents' diagnostics on stderr carry
// ("re-synced 1,204 pods", "stopped after 12,034 events"), the same way everywhere.
package diag

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var english = message.NewPrinter(language.English)

// Count is n with comma separators: 1,204.
func Count[N ~int | ~uint64](n N) string { return english.Sprint(n) }

// Events is "1 event" or "1,024 events".
func Events(n uint64) string { return Noun(n, "event", "events") }

// Noun is n and the noun that goes with it: "1 retry", "3 retries", "1,024 retries".
func Noun[N ~int | ~uint64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}
