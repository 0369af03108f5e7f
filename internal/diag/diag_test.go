package diag

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Count(12034); got != "12,034" {
		t.Errorf("Count(int 12034) = %q", got)
	}
	for n, want := range map[uint64]string{0: "0 events", 1: "1 event", 2: "2 events", 1024: "1,024 events"} {
		if got := Events(n); got != want {
			t.Errorf("Events(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNoun(t *testing.T) {
	for n, want := range map[int]string{0: "0 retries", 1: "1 retry", 2: "2 retries", 1500: "1,500 retries"} {
		if got := Noun(n, "retry", "retries"); got != want {
			t.Errorf("Noun(%d) = %q, want %q", n, got, want)
		}
	}
}
