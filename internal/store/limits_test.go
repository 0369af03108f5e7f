package store

import (
	"testing"
	"time"
)

func TestParseLimits(t *testing.T) {
	for in, want := range map[string]time.Duration{"14d": 14 * 24 * time.Hour, "36h": 36 * time.Hour, "1h30m": 90 * time.Minute, " 2d ": 48 * time.Hour} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0d", "-1h", "14", "d", "2w", "99999999999999d"} {
		if got, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) = %v; want an error", in, got)
		}
	}
	for in, want := range map[string]int64{"5GiB": 5 << 30, "5Gi": 5 << 30, "5gib": 5 << 30, "500MB": 500e6, "500M": 500e6, "1.5G": 1.5e9,
		"1048576": 1 << 20, "64 KiB": 64 << 10, "2TB": 2e12} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5G", "5X", "GiB", "5 GiBs", "1e3", "0.1"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %v; want an error", in, got)
		}
	}
}
