package store

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseAge reads a retention age as the user gives it: a duration as Go writes one
// (36h, 90m, 1h30m), or whole days (14d). Its error says what to give.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
		if n > math.MaxInt64/int(24*time.Hour) {
			err = strconv.ErrRange
		}
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age; give a positive duration, e.g. 14d, 36h or 90m", s)
	}
	return d, nil
}

// sizeUnits are the units of a size, by what follows the number (B optional, case
// ignored): powers of 1024 with i (KiB, MiB, GiB, TiB; Ki, Mi, Gi, Ti as Kubernetes
// writes them), of 1000 without (KB, MB, GB, TB; K, M, G, T).
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseSize reads a size in bytes as the user gives it: 5GiB, 5Gi, 500MB, 1.5G, or a
// number of bytes. Its error says what to give.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if err != nil || !ok || n <= 0 || n*float64(unit) >= math.MaxInt64 || n*float64(unit) < 1 {
		return 0, fmt.Errorf("%q is not a size; give one such as 5GiB, 500MiB or 2G", s)
	}
	return int64(n * float64(unit)), nil
}
